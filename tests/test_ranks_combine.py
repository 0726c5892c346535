"""The combined report of a multi-GPU run, from per-rank inputs built on the H200 run files:
the slowest rank sets the step time, skew and stragglers, hazards tagged with their ranks,
divergence between ranks, a rank that died kept next to the others."""

from __future__ import annotations

import dataclasses

import pytest

from launchprof.model.core import Report
from launchprof.model.step_timing import Stats
from launchprof.ranks.combine import STRAGGLER_SPREAD, combine
from launchprof.model.stats import speedup_of
from ranks_data import ALL_REDUCE, burst_median, cut_after, dropping, kernels_where, named, rank_input, recorded, with_trace


def test_the_same_run_on_two_ranks_combines_to_itself():
    one = rank_input(0, "decode_loop")
    combined = combine([one, rank_input(1, "decode_loop")])
    assert combined.verdict == one.report.verdict == "graphs-help"
    assert [s.rank for s in combined.ranks] == [0, 1] and {s.status for s in combined.ranks} == {"ok"}
    assert combined.eager.step_us == one.report.eager.step_us and combined.replay.step_us == one.report.replay.step_us
    assert combined.speedup.median == pytest.approx(one.report.speedup.median)
    assert [k.spread for k in combined.rank_skew] == [0.0, 0.0] and not any(k.stragglers for k in combined.rank_skew)
    assert not [h for h in combined.hazards if h.kind == "collective-divergence"]
    [h] = combined.hazards  # decode_loop's reallocated-input, found on both ranks: one finding
    assert h.message.startswith("ranks 0, 1: ") and h.details["ranks"] == [0, 1]
    s = combined.ranks[1]
    assert (s.pool_bytes, s.workspace_bytes) == (one.report.replay.pool_bytes, one.report.replay.workspace_bytes) == (2 * 2**20, 32 * 2**20)
    assert (s.kernels_per_step, s.graph_nodes, s.collectives_per_step) == (147, 147, 0)
    assert s.run_file == "out/report.rank1.lprun"
    assert combined.notes[0].startswith("the slowest rank sets the step time: eager from rank 0 and replay from rank 0")


def _slower(inp, side: str, factor: float):
    """The rank with its ``side`` samples ``factor`` times slower."""
    prof = getattr(inp.report, side)
    samples = [x * factor for x in prof.samples_us]
    s = prof.step_us
    slow = dataclasses.replace(prof, samples_us=samples, step_us=Stats(s.median * factor, s.p10 * factor, s.p90 * factor, s.n))
    return dataclasses.replace(inp, report=dataclasses.replace(inp.report, **{side: slow}))


def test_the_slowest_rank_sets_the_step_time_and_is_a_straggler():
    fast = rank_input(0, "decode_loop")
    slow = _slower(rank_input(1, "decode_loop"), "replay", 1.5)
    combined = combine([fast, slow])
    assert combined.replay.step_us == slow.report.replay.step_us
    assert combined.eager.step_us == fast.report.eager.step_us
    expected = speedup_of(fast.report.eager.samples_us, slow.report.replay.samples_us)
    assert combined.speedup.median == pytest.approx(expected.median)
    assert combined.speedup.median == pytest.approx(fast.report.speedup.median / 1.5, rel=1e-6)
    replay_skew = next(k for k in combined.rank_skew if k.side == "replay")
    assert (replay_skew.slowest_rank, replay_skew.fastest_rank, replay_skew.stragglers) == (1, 0, [1])
    assert replay_skew.spread == pytest.approx(0.5)
    assert combined.verdict == "graphs-help"  # still about 3x
    assert "replay from rank 1" in combined.notes[0]


def test_a_spread_under_the_threshold_names_no_straggler():
    combined = combine([rank_input(0, "decode_loop"), _slower(rank_input(1, "decode_loop"), "eager", 1 + STRAGGLER_SPREAD)])
    eager_skew = next(k for k in combined.rank_skew if k.side == "eager")
    assert eager_skew.spread == pytest.approx(STRAGGLER_SPREAD) and eager_skew.stragglers == []


def test_two_different_steps_diverge_and_cannot_be_captured_together():
    combined = combine([rank_input(0, "decode_loop"), rank_input(1, "long_kernels")])
    [div] = [h for h in combined.hazards if h.kind == "collective-divergence"]
    assert div.severity == "error" and div.details["sequence"] == "kernel" and div.details["position"] == 1
    assert "ranks 0 and 1 run different kernel sequences per step (147 vs 2 kernels)" in div.message
    assert combined.verdict == "replay-invalid"  # each rank captured; their replays would deadlock
    eager_skew = next(k for k in combined.rank_skew if k.side == "eager")
    assert eager_skew.slowest_rank == 1 and eager_skew.stragglers == [1]
    slowest = burst_median("long_kernels", "eager")
    assert slowest > burst_median("decode_loop", "eager"), "long_kernels is no longer the slower step"
    assert combined.eager.step_us.median == pytest.approx(slowest, rel=1e-9)  # long_kernels, the slowest


def test_a_collective_on_a_side_stream_left_out_of_the_capture_is_tagged_with_each_rank():
    run = recorded("two_streams_ok")
    run = with_trace(with_trace(run, "eager", kernels_where(named("sigmoid_kernel"), ALL_REDUCE)), "replay", dropping(named("sigmoid_kernel")))
    combined = combine([rank_input(0, run), rank_input(1, run)])
    found = [h for h in combined.hazards if h.kind == "uncaptured-collective"]
    assert [h.details["ranks"] for h in found] == [[0], [1]]
    assert [h.message.split(":")[0] for h in found] == ["rank 0", "rank 1"]
    assert not [h for h in combined.hazards if h.kind == "collective-divergence"]
    assert combined.verdict == "replay-invalid"  # captured, but every replay skips the collective
    assert [(s.collectives_per_step, s.collectives_captured) for s in combined.ranks] == [(1, 0), (1, 0)]


def test_a_rank_that_died_is_reported_and_the_other_kept():
    healthy = rank_input(0, "decode_loop")
    died = rank_input(1, cut_after(recorded("decode_loop"), "trace"), exit_code=-11, signal="SIGSEGV", output_tail=["Segmentation fault"])
    combined = combine([healthy, died])
    r0, r1 = combined.ranks
    assert r1.status == "died" and r1.exit_code == -11 and r1.signal == "SIGSEGV"
    assert "the rank's worker died (SIGSEGV) without finishing; its last event: trace" in r1.cause
    assert r1.last_events[-1].startswith("trace at ") and r1.output_tail == ["Segmentation fault"]
    assert r0.status == "ok" and r0.last_events == []
    assert (r0.eager_step_us, r0.replay_step_us) == (healthy.report.eager.step_us.median, healthy.report.replay.step_us.median)
    assert combined.verdict == "script-failed"
    # The combined step is rank 0's: rank 1's partial (in-loop) figures set nothing.
    assert combined.eager.step_us == healthy.report.eager.step_us and combined.speedup.median == pytest.approx(healthy.report.speedup.median)
    assert "the 1 of 2 ranks that finished" in combined.notes[0]
    assert combined.run.complete is False and combined.run.cause.startswith("rank 1: the rank's worker died (SIGSEGV)")


def test_a_rank_that_could_not_capture_decides_the_verdict():
    combined = combine([rank_input(0, "decode_loop"), rank_input(1, "hidden_sync")])
    assert combined.verdict == "not-capturable"
    syncs = [h for h in combined.hazards if h.kind == "hidden-sync"]
    assert syncs and all(h.details["ranks"] == [1] and h.message.startswith("rank 1: ") for h in syncs)


def test_the_combined_report_survives_json():
    combined = combine([rank_input(0, "decode_loop"), _slower(rank_input(1, "decode_loop"), "replay", 1.5)])
    back = Report.from_dict(combined.to_dict())
    assert back.ranks == combined.ranks and back.rank_skew == combined.rank_skew
    assert back.to_dict()["ranks"][1]["replay_step_us"] == pytest.approx(1.5 * burst_median("decode_loop", "replay"), rel=1e-9)


def test_a_single_gpu_report_has_no_ranks():
    report = rank_input(0, "decode_loop").report
    assert report.ranks is None and report.rank_skew is None
