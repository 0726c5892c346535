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
    assert report.verdict is Verdict.NOT_CAPTURABLE


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
