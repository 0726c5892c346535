"""Runs recorded on an H200 with the default analyze (tests/data/fast_runs, 2026-12-02): no
profiler where a graph was captured and the calls ran one op sequence, a late profile where
capture failed or the sequences differed, and the script stopped once measured.

The checks compare each derived figure with an independent one in the same run: the graph's
kernel count against its anatomy's kernel nodes, the prediction's replay estimate against the
replay the bursts measured, the stop against the plan's own call count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.run import load_run

FAST = Path(__file__).parent / "data" / "fast_runs"
CAPTURED = ["decode_loop", "long_kernels", "long_training"]


def _run(name: str):
    run = load_run(FAST / f"{name}.lprun")
    return run, analyse(run, stored_profile(run.profile))  # the device profile it was recorded with


def _events(run, kind: str) -> list[dict]:
    return [e for e in run.events if e["type"] == kind]


def test_the_recorded_runs_are_there():
    assert sorted(p.stem for p in FAST.glob("*.lprun")) == sorted(
        ["data_dependent", "decode_loop", "decode_loop.kernels", "hidden_sync", "long_kernels", "long_training"]
    )


@pytest.mark.parametrize("name", CAPTURED)
def test_a_captured_step_has_no_trace_and_figures_from_its_graph(name):
    run, report = _run(name)
    assert [(e["profiled"], e["when"]) for e in _events(run, "profiler-plan")] == [(False, "start")]
    assert not _events(run, "trace")
    ops = _events(run, "op-sequence")
    assert len(ops) == 3 and len({e["digest"] for e in ops}) == 1
    kernel_nodes = sum(1 for n in _events(run, "anatomy")[0]["nodes"] if n["type"] == "kernel")
    assert report.eager.kernels_per_step == report.replay.node_types["kernel"] == kernel_nodes
    assert report.eager.basis["kernels_per_step"] == "graph-nodes" and report.eager.basis["gpu_busy_us"] == "events"
    assert report.eager.launch_gap_us is None and report.timeline is None
    # the prediction from the graph's nodes against the replay the bursts measured
    assert 0.8 < report.prediction.replay_step_us / report.replay.step_us.median < 1.25


@pytest.mark.parametrize("name", CAPTURED)
def test_the_script_was_stopped_once_measured(name):
    run, report = _run(name)
    plan_end = _events(run, "plan-end")[0]
    end = _events(run, "script-end")[0]
    assert end["status"] == "done" and end["stopped_after_calls"] == plan_end["calls"] == report.run.stopped_after_calls
    order = [e["type"] for e in run.events if e["type"] in ("plan-end", "race-check", "script-end")]
    assert order == ["plan-end", "race-check", "script-end"]


def test_kernels_asked_for_profile_the_same_graph():
    run, report = _run("decode_loop.kernels")
    _, derived = _run("decode_loop")
    assert [(e["profiled"], e["reason"]) for e in _events(run, "profiler-plan")] == [(True, "kernels")]
    assert sorted(e["what"] for e in _events(run, "trace")) == ["eager", "replay"]
    assert report.eager.basis == {}
    # the profiled eager kernel count and the graph's kernel nodes of another process agree
    assert report.eager.kernels_per_step == derived.eager.kernels_per_step == 147


def test_a_failed_capture_is_profiled_after_the_plan():
    run, report = _run("hidden_sync")
    assert [(e["profiled"], e["reason"], e["when"]) for e in _events(run, "profiler-plan")] == [
        (False, None, "start"), (True, "capture-failed", "after-plan")]  # fmt: skip
    assert [e["what"] for e in _events(run, "trace")] == ["eager"]
    assert report.verdict.value == "not-capturable" and report.eager.kernels_per_step == 18
    assert report.eager.basis == {}
    assert any(h.kind == "hidden-sync" for h in report.hazards)


def test_differing_op_sequences_are_profiled_after_the_plan():
    run, report = _run("data_dependent")
    assert [(e["reason"], e["when"]) for e in _events(run, "profiler-plan")] == [(None, "start"), ("ops-differ", "after-plan")]
    assert len({e["digest"] for e in _events(run, "op-sequence")}) == 2
    found = [h for h in report.hazards if h.kind == "data-dependent-control-flow"]
    assert len(found) == 1, [h.kind for h in report.hazards]
