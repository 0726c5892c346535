"""The two scalings of the prediction's inputs (analysis/prediction.py), on CPU.

- The host's speed: the worker samples the profile's eager-op loop between the bursts;
  the profile's launch costs scale by this run's speed over the profile's, and the ends of
  their intervals by the samples' own range. A scale out of range is a failed loop.
- The GPU's clock: where the eager step keeps the GPU busy, the traced node times scale to
  the bursts' event-timed GPU span (H200 long_kernels: 2796 µs busy in the profiled call,
  a 3215 µs span in the bursts), within a bounded range.
"""

from __future__ import annotations

import dataclasses

import pytest

from launchprof.analysis.prediction import (
    CLOCK_RANGE,
    HOST_COEFFICIENTS,
    SCALE_RANGE,
    at_host_speed,
    gpu_clock_scale,
    host_scale,
    host_speed_note,
)
from launchprof.analysis.load import stored_profile
from launchprof.run.evidence import Evidence, host_op_slopes
from launchprof.model.step_timing import EagerProfile, Stats
from launchprof.render.words.notes_text import note_text
from tests.recorded import load


def _eager(idle: float | None, busy: float | None, span: float | None, timing: str | None = "burst") -> EagerProfile:
    stats = Stats(median=span, p10=span, p90=span, n=60) if span is not None else None
    return EagerProfile(step_us=None, kernels_per_step=2, gpu_busy_us=busy, gpu_idle_fraction=idle, launch_gap_us=None, gpu_span_us=stats, timing=timing)


def test_the_clock_scale_is_the_bursts_span_over_the_traced_one_only_where_the_gpu_is_busy():
    assert gpu_clock_scale(_eager(0.014, 2796.5, 3215.3)) == pytest.approx(3215.3 / (2796.5 / 0.986))
    assert gpu_clock_scale(_eager(0.30, 2796.5, 3215.3)) is None  # launch gaps in the span: says nothing of the clock
    assert gpu_clock_scale(_eager(0.014, 2796.5, 3215.3, timing="in-loop")) is None
    assert gpu_clock_scale(_eager(0.014, None, 3215.3)) is None
    assert gpu_clock_scale(_eager(None, 2796.5, 3215.3)) is None
    assert gpu_clock_scale(_eager(0.014, 2796.5, None)) is None
    # a span twice the traced time is a host preamble inside the events, not a clock
    assert gpu_clock_scale(_eager(0.01, 1000.0, 1000.0 / 0.99 * (CLOCK_RANGE[1] + 0.1))) is None
    assert gpu_clock_scale(_eager(0.01, 1000.0, 1000.0 / 0.99 * (CLOCK_RANGE[0] - 0.05))) is None


def test_the_recorded_gpu_bound_run_predicts_its_replay_at_the_bursts_clock():
    from launchprof.analysis import analyse

    run = load("long_kernels")
    report = analyse(run, stored_profile(run.profile))
    assert "node times scaled by" in report.prediction.basis
    measured = report.replay.step_us.median
    assert abs(report.prediction.replay_step_us / measured - 1) < 0.05, (report.prediction.replay_step_us, measured)


def test_host_op_slopes_are_per_sample_pair():
    samples = {"64": [20.0 + 7.0 * 64, 20.0 + 9.0 * 64], "256": [20.0 + 7.0 * 256, 20.0 + 9.0 * 256]}
    assert host_op_slopes(samples, [64, 256]) == pytest.approx([7.0, 9.0])
    assert host_op_slopes(None, [64, 256]) == [] and host_op_slopes(samples, None) == []


def _profile():
    run = load("two_streams_ok")
    return stored_profile(run.profile)


def test_the_host_scale_and_its_range_reach_the_launch_costs_only():
    profile = _profile()
    then = profile.eager_op_us.median
    ev = Evidence(host_eager_op_us=then * 1.2, host_op_slopes=[then * 1.1, then * 1.2, then * 1.35])
    scale = host_scale(ev, profile)
    assert (scale.median, scale.low, scale.high) == pytest.approx((1.2, 1.1, 1.35))
    scaled = at_host_speed(profile, scale)
    for name in HOST_COEFFICIENTS:
        before, after = getattr(profile, name), getattr(scaled, name)
        if before is not None:
            assert (after.median, after.low, after.high) == pytest.approx((before.median * 1.2, before.low * 1.1, before.high * 1.35))
    for name in ("graph_node_us", "floor_node_us", "graph_gap_us", "empty_kernel_us"):
        assert getattr(scaled, name) == getattr(profile, name)
    assert dataclasses.asdict(at_host_speed(profile, None)) == dataclasses.asdict(profile)


def test_a_scale_out_of_range_is_a_failed_loop_not_a_host_speed():
    profile = _profile()
    then = profile.eager_op_us.median
    for factor in (SCALE_RANGE[0] / 2, SCALE_RANGE[1] * 2):
        ev = Evidence(host_eager_op_us=then * factor)
        assert host_scale(ev, profile) is None
        assert "failed measurement" in note_text(host_speed_note(ev, profile))
    assert host_scale(Evidence(host_eager_op_us=None), profile) is None
    assert host_scale(Evidence(host_eager_op_us=then), None) is None
