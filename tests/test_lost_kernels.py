"""A target whose eager profile holds no kernel, told apart from a CPU-only step.

``tests/data/lost_kernels/frozen_scalar.lprun`` was recorded on the H200 (2026-12-01) when
the overview's profiler of a decorated target ended without a CUPTI teardown and the
plan's own profiler ended with one: the eager trace came back with no kernels while the
captured graph held 2 nodes, and the report said "launches no CUDA work" and forced
graphs-dont-help. The worker now tears down at the overview's stop too (whole_script.py);
the analysis must not turn a lost trace into a verdict either way."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from launchprof.analysis import analyse
from launchprof.enums import Verdict
from launchprof.run import load_run

LOST = Path(__file__).parent / "data" / "lost_kernels" / "frozen_scalar.lprun"


def test_a_lost_eager_trace_is_named_and_does_not_decide_the_verdict():
    run = load_run(LOST)
    report = analyse(run)
    assert report.eager.kernels_per_step is None and report.replay.graph_nodes == 2  # unknown, not zero
    assert any("the eager profile recorded no kernels, yet the captured graph holds 2 nodes" in n for n in report.notes)
    assert not any("launches no CUDA work" in n or "for 0 eager kernels" in n for n in report.notes)
    # frozen_scalar's replay does not match eager (its lr is frozen): that, not the lost trace, decides
    assert report.verdict is Verdict.REPLAY_INVALID


def test_a_copy_only_step_is_not_a_lost_trace():
    """A step that only copies (``dst.copy_(src)``) has no kernel but memcpy nodes and copies
    in its eager trace: no lost-trace note, its zero kernels stand."""
    run = load_run(LOST)
    events = [
        {**e, "graph_nodes": 1, "node_types": {"memcpy": 1}} if e.get("type") == "capture" else e
        for e in run.events
    ]
    report = analyse(dataclasses.replace(run, events=events))
    assert report.eager.kernels_per_step == 0
    assert not any("lost" in n for n in report.notes)
    assert any("no CUDA kernel, only copies" in n for n in report.notes)


def test_a_step_with_no_gpu_work_and_an_empty_graph_is_still_cpu_only():
    run = load_run(LOST)
    events = [
        {**e, "graph_nodes": 0, "node_types": {}} if e.get("type") == "capture" else e
        for e in run.events
        if not (e.get("type") == "trace" and e.get("what") == "replay")
    ]
    report = analyse(dataclasses.replace(run, events=events))
    assert any("launches no CUDA work" in n for n in report.notes)
    assert report.verdict is Verdict.GRAPHS_DONT_HELP


def _stopped_in_the_profile(run, may_be_lost: bool):
    """The run as if the script had stopped calling during the eager profile: no capture, no
    replay, and the eager trace flagged as the worker flags an empty session it could not
    take again (worker/plan_profiles.py ``finish_profile(run, retry=False)``)."""
    events = []
    for e in run.events:
        if e.get("type") in ("capture", "anatomy", "validation", "replay-timing", "memory") or (
            e.get("type") == "trace" and e.get("what") == "replay"
        ):
            continue
        if e.get("type") == "timing" and e.get("kind") in ("replay", "clone"):
            continue
        if e.get("type") == "trace" and e.get("what") == "eager":
            e = {**e, "may_be_lost": may_be_lost}
        events.append(e)
    return dataclasses.replace(run, events=events)


def test_an_empty_eager_trace_never_taken_again_is_unknown_not_cpu_only():
    """Without a graph to compare with, a lost session and a step with no CUDA work look the
    same; the worker says it could not take the session again, and the counts are unknown
    rather than zero: no "CPU only" verdict from a trace that may have been lost."""
    run = load_run(LOST)
    flagged = analyse(_stopped_in_the_profile(run, may_be_lost=True))
    assert flagged.replay is None and flagged.eager.kernels_per_step is None
    assert any("either the step runs no CUDA work or the profiler lost the trace" in n for n in flagged.notes)
    assert flagged.verdict is not Verdict.GRAPHS_DONT_HELP
    plain = analyse(_stopped_in_the_profile(run, may_be_lost=False))  # a retaken, still empty session
    assert plain.eager.kernels_per_step == 0 and plain.verdict is Verdict.GRAPHS_DONT_HELP
    assert any("launches no CUDA work" in n for n in plain.notes)
