"""uncaptured-collective and collective-divergence, on the H200 traces of tests/data/runs edited
the way a collective shows in them (pure analysis: no GPU, no process group)."""

from __future__ import annotations

import pytest

from launchprof.events.record import Site
from launchprof.hazards.collectives import collective_divergence, collectives_per_call, short_name, uncaptured_collectives
from launchprof.common.trace_tables import gpu_table
from ranks_data import ALL_REDUCE, dropping, kernels_where, named, on_stream, recorded, with_trace

SIGMOID = "sigmoid_kernel"  # two_streams_ok.py runs its sigmoid on the side stream (13 in the eager trace)
ADD = "CUDAFunctor_add"  # ... and the join's add on the step's own stream (7)


def tables(eager_edit, replay_edit):
    run = with_trace(with_trace(recorded("two_streams_ok"), "eager", eager_edit), "replay", replay_edit)
    return gpu_table(run.trace("eager")), gpu_table(run.trace("replay"))


def test_a_side_stream_collective_missing_from_the_graph_is_found():
    eager, replay = tables(kernels_where(named(SIGMOID), ALL_REDUCE), dropping(named(SIGMOID)))
    assert collectives_per_call(eager) == 1 and collectives_per_call(replay) == 0
    [h] = uncaptured_collectives(eager, replay, Site(file="tp.py", line=7, code="def step(x):"), rank=1)
    assert h.kind == "uncaptured-collective" and h.severity == "error"
    assert h.message.startswith("rank 1: 1 of 1 collective(s)")
    assert "issued on a side stream that never joined the capture" in h.message
    assert "13" not in h.message and "7" not in h.message.replace("rank 1", "")  # raw stream ids are data, never words
    assert h.params["side_streams"] == ["13"] and h.params["main_stream"] == "7"
    assert "ncclDevKernel_AllReduce_Sum_f32_RING_LL" in h.message
    assert (h.file, h.line, h.details["ranks"], h.details["streams"]) == ("tp.py", 7, [1], ["13"])


def test_a_captured_collective_is_no_hazard():
    rename = kernels_where(named(SIGMOID), ALL_REDUCE)
    eager, replay = tables(rename, rename)
    assert collectives_per_call(eager) == collectives_per_call(replay) == 1
    assert uncaptured_collectives(eager, replay, None, rank=0) == []


def test_a_missing_collective_on_the_main_stream_says_so():
    eager, replay = tables(kernels_where(named(ADD), ALL_REDUCE), dropping(named(ADD)))
    [h] = uncaptured_collectives(eager, replay, None, rank=0)
    assert "issued on the step's own stream, yet not in the graph" in h.message and h.details["streams"] == []


def test_no_collectives_no_finding():
    run = recorded("two_streams_ok")
    eager, replay = gpu_table(run.trace("eager")), gpu_table(run.trace("replay"))
    assert collectives_per_call(eager) == 0
    assert uncaptured_collectives(eager, replay, None, rank=0) == []


def test_on_stream_edit_matches_the_recorded_side_stream():
    """The fixture's premise: the side-stream kernels of this run are on stream 13."""
    eager, _ = tables(kernels_where(on_stream(13), ALL_REDUCE), lambda e: e)
    assert collectives_per_call(eager) == 3


def test_kernel_divergence_names_the_first_position_and_the_lines():
    a = ["gemm", "relu", "gemm", ALL_REDUCE, "add"]
    b = ["gemm", "relu", "mul", "gemm", ALL_REDUCE, "add"]
    [h] = collective_divergence({0: a, 1: b}, Site(file="tp.py", line=3))
    assert h.kind == "collective-divergence" and h.severity == "error"
    assert h.details["sequence"] == "kernel" and h.details["position"] == 3
    assert "rank 0 runs `gemm`, rank 1 runs `mul`" in h.message
    assert h.details["lines"]["1"] == ["  1: gemm", "  2: relu", "> 3: mul", "  4: gemm", f"  5: {short_name(ALL_REDUCE)}"]
    assert h.details["ranks"] == [0, 1]


def test_collective_divergence_comes_first_and_speaks_of_deadlock():
    a = ["gemm", ALL_REDUCE, "gemm", ALL_REDUCE]
    b = ["gemm", ALL_REDUCE, "gemm", "gemm"]
    [h] = collective_divergence({0: a, 1: b}, None)
    assert h.details["sequence"] == "collective" and h.details["position"] == 2
    assert "(2 vs 1 collectives)" in h.message and "nothing (its step ends)" in h.message
    assert "deadlock" in h.message
    assert h.details["lines"]["1"][-1] == "> 2: (the step ends here)"


@pytest.mark.parametrize("ranks", [2, 4])
def test_the_same_sequence_on_every_rank_is_no_hazard(ranks):
    seq = ["gemm", ALL_REDUCE, "add"]
    assert collective_divergence({r: list(seq) for r in range(ranks)}, None) == []


def test_every_differing_rank_is_compared_with_the_lowest():
    seq = ["gemm", ALL_REDUCE]
    found = collective_divergence({0: seq, 1: seq, 2: ["gemm", "relu", ALL_REDUCE], 3: seq}, None)
    assert [h.details["ranks"] for h in found] == [[0, 2]]


def test_short_names_drop_templates_and_arguments():
    assert short_name(ALL_REDUCE) == "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    assert short_name("void at::native::vectorized_elementwise_kernel<4, at::native::X>(int)") == "at::native::vectorized_elementwise_kernel"
