"""Profiler trace -> kernel table -> per-call numbers, on traces recorded on an H200."""

from __future__ import annotations

import pytest

from launchprof.common.trace_tables import busy_and_gaps, gpu_table, launch_api_table, per_call, timeline_of
from tests.recorded import load, recorded

recorded(["decode_loop", "long_kernels"])


def _trace(name: str, what: str):
    run = load(name)
    trace = run.trace(what)
    assert trace is not None, f"{name} has no {what} trace"
    return run.events, trace


def test_decode_kernels_per_call_match_graph_nodes():
    events, trace = _trace("decode_loop", "eager")
    calls = per_call(gpu_table(trace), launch_api_table(trace))
    assert len(calls) == 3, "three profiled calls"
    counts = {c.kernels for c in calls}
    assert len(counts) == 1, f"one decode step launches the same kernels every call: {counts}"
    capture = next(e for e in events if e["type"] == "capture")
    # Every node of the captured graph is a kernel; eager launched exactly those kernels.
    assert capture["node_types"] == {"kernel": capture["graph_nodes"]}
    assert counts.pop() == capture["graph_nodes"]


def test_decode_is_launch_bound():
    _, trace = _trace("decode_loop", "eager")
    calls = per_call(gpu_table(trace), launch_api_table(trace))
    for c in calls:
        assert 0 < c.busy_us <= c.span_us
        assert len(c.gaps_us) >= c.kernels // 2  # small kernels leave gaps between them
        assert 0.0 < 1 - c.busy_us / c.span_us < 1.0
        assert c.launch_api_us > 0
        assert c.sequence == calls[0].sequence


def test_long_kernels_are_two_matmuls():
    _, trace = _trace("long_kernels", "eager")
    calls = per_call(gpu_table(trace), launch_api_table(trace))
    for c in calls:
        assert c.kernels == 2
        assert min(c.kernel_us) > 500  # each 8192^3 bf16 product takes over half a millisecond
        assert 1 - c.busy_us / c.span_us < 0.05  # the GPU is busy nearly all the step


def test_replay_timeline_is_relative_and_ordered():
    _, trace = _trace("decode_loop", "replay")
    spans = timeline_of(gpu_table(trace), 0)
    assert spans and spans[0]["start_us"] == 0.0
    starts = [s["start_us"] for s in spans]
    assert starts == sorted(starts)
    assert all(s["dur_us"] >= 0 for s in spans)


def test_busy_and_gaps_on_overlapping_intervals():
    import numpy as np

    busy, gaps = busy_and_gaps(np.array([0.0, 5.0, 20.0, 22.0]), np.array([10.0, 8.0, 25.0, 30.0]))
    assert busy == pytest.approx(20.0)  # [0,10] and [20,30]
    assert gaps == [10.0]
