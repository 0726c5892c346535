"""The crossover fit and derivations, on CPU: simulated sweeps with known truth, and H200 data when present."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from launchprof.crossover import lines
from launchprof.crossover.fit import (
    derive_profile,
    gain_at,
    gain_below,
    nodes_crossover,
    refit,
    with_launch_floor,
)
from launchprof.crossover.lines import fit_line
from launchprof.crossover.profile import (
    CrossoverPoint,
    Interval,
    Kind,
    LineFit,
    profile_from_dict,
)
from launchprof.crossover.simulate import SimulatedDevice, simulate_samples
from launchprof.crossover.plans import DEFAULT_PLAN, QUICK_PLAN, estimate_seconds
from launchprof.crossover.recorder import NoProgress, Recorder as _Recorder, caused_by_interrupt as _caused_by_interrupt, guarded as _guarded
from launchprof.model.core import Machine

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")
TRUE = SimulatedDevice()
DATA = Path(__file__).parent / "data"


def line(fixed: float, slope: float) -> LineFit:
    return LineFit(Interval(fixed, fixed, fixed), Interval(slope, slope, slope), points=2)


@pytest.fixture(scope="module")
def default_profile():
    return derive_profile(simulate_samples(DEFAULT_PLAN, seed=1), H200)


def within(value: Interval | None, truth: float, rel: float) -> bool:
    return value is not None and math.isclose(value.median, truth, rel_tol=rel)


# --- lines ---------------------------------------------------------------------------


def test_fit_line_is_exact_on_a_noiseless_line():
    counts = [1, 4, 16, 64, 256]
    got = fit_line(counts, [[9.0 + 0.95 * n] * 3 for n in counts])
    assert got is not None
    assert got.fixed_us.median == pytest.approx(9.0)
    assert got.per_node_us.median == pytest.approx(0.95)
    assert got.points == 5


def test_fit_line_interval_covers_the_truth_under_noise():
    import numpy as np

    rng = np.random.default_rng(3)
    counts = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    groups = [list((9.0 + 0.95 * n) * rng.lognormal(0, 0.03, size=9)) for n in counts]
    got = fit_line(counts, groups)
    assert got.per_node_us.low <= 0.95 <= got.per_node_us.high
    assert got.fixed_us.low <= 9.0 <= got.fixed_us.high
    assert got.per_node_us.low < got.per_node_us.median < got.per_node_us.high


def test_fit_line_weights_small_counts_so_the_intercept_is_not_noise():
    # One 1% wobble at 1024 nodes would move an unweighted intercept by ~10 µs.
    counts = [1, 4, 16, 64, 256, 1024]
    groups = [[9.0 + 0.95 * n] for n in counts]
    groups[-1] = [(9.0 + 0.95 * 1024) * 1.01]
    got = fit_line(counts, groups)
    assert abs(got.fixed_us.median - 9.0) < 1.0


def test_fit_line_needs_two_counts_and_ignores_non_finite_values():
    assert fit_line([64], [[10.0, 11.0]]) is None
    assert fit_line([], []) is None
    assert fit_line([1, 2], [[float("nan")], [3.0]]) is None
    got = fit_line([1, 2], [[1.0, float("inf")], [2.0]])
    assert got.per_node_us.median == pytest.approx(1.0)


def test_single_values_per_count_get_a_residual_interval():
    from scipy import stats

    x, y = [1, 2, 3, 4], [1.1, 1.9, 3.2, 3.9]
    got = fit_line(x, [[v] for v in y], relative=False)
    assert got.per_node_us.low < got.per_node_us.median < got.per_node_us.high
    # unweighted, it is the textbook t-interval of the slope: 95%, n - 2 degrees of freedom
    ref = stats.linregress(x, y)
    half = stats.t.ppf(0.975, len(x) - 2) * ref.stderr
    assert got.per_node_us.median == pytest.approx(ref.slope)
    assert (got.per_node_us.low, got.per_node_us.high) == pytest.approx((ref.slope - half, ref.slope + half))
    assert (got.fixed_us.low, got.fixed_us.high) == pytest.approx(
        (ref.intercept - stats.t.ppf(0.975, 2) * ref.intercept_stderr, ref.intercept + stats.t.ppf(0.975, 2) * ref.intercept_stderr)
    )


# --- crossover arithmetic ------------------------------------------------------------


def test_nodes_crossover_solves_the_two_lines():
    # eager 6 + 2.4 N against replay 9 + 0.95 N: replay wins from N > 2.07, i.e. 3.
    assert nodes_crossover(line(6, 2.4), line(9, 0.95)) == 3
    # a graph launch cheaper than one eager launch wins from the first node
    assert nodes_crossover(line(10, 7), line(9, 1)) == 1
    # replay per node no cheaper than eager: never
    assert nodes_crossover(line(6, 100.4), line(9, 100.4)) is None
    assert nodes_crossover(line(6, 1.0), line(9, 1.2)) is None


def test_nodes_crossover_exact_boundary_is_not_a_win():
    # eager 0 + 2N, replay 4 + 1N: equal at N = 4, replay strictly faster from 5
    assert nodes_crossover(line(0, 2), line(4, 1)) == 5


def test_gain_at_64_nodes_is_eager_over_replay_minus_one():
    assert gain_at(line(6, 7.0), line(9, 1.0)) == pytest.approx((6 + 7 * 64) / (9 + 64) - 1)


def test_torch_op_floor_only_raises_short_kernels():
    assert with_launch_floor(line(6, 2.4), 7.0).per_node_us.median == 7.0
    assert with_launch_floor(line(6, 21.2), 7.0).per_node_us.median == 21.2
    assert with_launch_floor(line(6, 2.4), None).per_node_us.median == 2.4


def test_gain_below_interpolates_between_durations():
    points = [CrossoverPoint(0, 1, 1.3), CrossoverPoint(10, 5, 0.069), CrossoverPoint(20, 4, 0.039), CrossoverPoint(50, 4, 0.014)]
    assert gain_below(points) == pytest.approx(10 + (0.069 - 0.05) / (0.069 - 0.039) * 10)
    assert gain_below([CrossoverPoint(5, 1, 0.01)]) == 5
    assert gain_below([CrossoverPoint(5, 1, 0.5)]) is None
    assert gain_below([]) is None


# --- the whole profile from a simulated H200 ----------------------------------------


def test_derive_recovers_the_simulated_coefficients(default_profile):
    p = default_profile
    assert within(p.eager_op_us, TRUE.eager_op_us, 0.03)
    assert within(p.raw_launch_us, TRUE.raw_launch_us, 0.05)
    assert p.raw_launch_method == "torch.cuda._sleep(0)"
    assert within(p.graph_launch_fixed_us, TRUE.graph_fixed_us, 0.05)
    assert within(p.graph_node_us, TRUE.graph_node_us, 0.03)
    assert within(p.floor_node_us, TRUE.floor_node_us, 0.03)
    assert within(p.capture_node_us, TRUE.capture_node_us, 0.03)
    assert within(p.instantiate_node_us, TRUE.instantiate_node_us, 0.03)
    assert within(p.update_node_us, TRUE.update_node_us, 0.05)
    assert within(p.reinstantiate_node_us, TRUE.reinstantiate_node_us, 0.05)
    assert p.graph_gap_us is not None and abs(p.graph_gap_us.median - TRUE.graph_gap_us) < 0.25
    assert p.eager_gap_us is not None and abs(p.eager_gap_us.median - TRUE.eager_gap_us) < 0.25
    assert within(p.kernel_scale, 1.0, 0.02)
    assert p.cycles_per_us == pytest.approx(TRUE.cycles_per_us, rel=0.02)
    assert within(p.empty_kernel_us, TRUE.traced_spin_us, 0.02)
    for value in (p.eager_op_us, p.graph_node_us, p.instantiate_node_us):
        assert value.low <= value.median <= value.high


def test_derive_states_the_crossover_per_duration(default_profile):
    p = default_profile
    by_k = {c.kernel_us: c for c in p.crossover}
    assert sorted(by_k) == list(DEFAULT_PLAN.kernel_us)
    assert by_k[0.0].nodes_crossover == 3  # true lines cross at 2.07 nodes
    assert by_k[0.0].nodes_crossover_torch_op == 1
    assert by_k[0.0].gain_at_64_nodes == pytest.approx((6 + 2.4 * 64) / (9 + 0.95 * 64) - 1, rel=0.05)
    gains = [by_k[k].gain_at_64_nodes for k in sorted(by_k)]
    assert gains[0] > 1.0 > gains[3] > 0.0  # short kernels gain a lot, 5 µs ones little
    # true gain at 64 nodes: 6.9% at 10 µs, 3.9% at 20 µs -> 5% near 16 µs
    assert 12.0 < p.gain_below_5pct_kernel_us < 20.0
    assert len(p.crossover_throughput) == len(p.crossover)


def test_amortisation_matches_the_design_range(default_profile):
    # docs/architecture.md (Observed on an H200): replays to pay back instantiation about 1.5-40 depending on node count.
    replays = [a.replays for a in default_profile.amortisation]
    assert all(r is not None for r in replays)
    assert replays == sorted(replays, reverse=True)
    assert 1.3 < replays[-1] < 2.0
    assert replays[0] < 40


def test_model_sentence_states_the_model_and_intervals(default_profile):
    text = default_profile.model
    assert "max(Launch, kernel + gap_e)·N" in text
    assert "LaunchGraph + max(Node, kernel + gap_g)·N" in text
    assert "Instantiate" in text and "[" in text and "]" in text


def test_refit_reproduces_the_profile_through_json(default_profile):
    again = refit(profile_from_dict(json.loads(default_profile.to_json())))
    assert again.graph_node_us.median == pytest.approx(default_profile.graph_node_us.median, rel=1e-3)
    assert again.crossover[0].nodes_crossover == default_profile.crossover[0].nodes_crossover
    assert again.crossover[0].gain_at_64_nodes == pytest.approx(default_profile.crossover[0].gain_at_64_nodes, rel=1e-4)
    assert again.notes == default_profile.notes


def test_quick_plan_profile_is_complete_too():
    p = derive_profile(simulate_samples(QUICK_PLAN), H200, quick=True)
    assert p.quick
    assert within(p.graph_node_us, TRUE.graph_node_us, 0.05)
    assert [c.kernel_us for c in p.crossover] == list(QUICK_PLAN.kernel_us)


def test_partial_samples_give_a_partial_profile_not_a_crash():
    samples = [s for s in simulate_samples(QUICK_PLAN) if s.kind in ("calibration", "eager_op") or s.kind.startswith("raw_launch")]
    p = derive_profile(samples, H200, partial=True, notes=["interrupted during floor"])
    assert p.partial and p.eager_op_us is not None
    assert p.graph_node_us is None and p.crossover == [] and p.gain_below_5pct_kernel_us is None
    assert p.amortisation == []
    assert "n/a" in p.model


def test_derive_handles_no_samples_at_all():
    p = derive_profile([], H200, partial=True)
    assert p.eager_op_us is None and p.crossover == [] and p.cycles_per_us is None


def test_cheapest_raw_launch_method_wins():
    samples = simulate_samples(QUICK_PLAN)
    slower = [dataclasses.replace(s, kind="raw_launch:cupy-empty-kernel", values_us=tuple(v * 1.5 for v in s.values_us))
              for s in samples if s.kind.startswith("raw_launch:")]
    method, best = lines.cheapest(samples + slower, "raw_launch")
    assert method == "torch.cuda._sleep(0)"
    assert best.per_node_us.median == pytest.approx(TRUE.raw_launch_us, rel=0.05)


def test_curve_gives_medians_by_count():
    samples = simulate_samples(QUICK_PLAN, noise=0.0)
    points = dict(lines.curve(samples, Kind.GRAPH_LATENCY, 0.0))
    assert points[64] == pytest.approx(TRUE.graph_latency(0.0, 64))
    assert dict(lines.curve(samples, Kind.EAGER_LATENCY, 0.0))[64] == pytest.approx(TRUE.eager_latency(0.0, 64))


# --- the plans and the sweep's guard rails (no GPU needed) ---------------------------


def test_plans_cover_the_issue_ranges_within_their_budgets():
    for plan in (QUICK_PLAN, DEFAULT_PLAN):
        counts = {n for _, n in plan.cells()}
        assert min(counts) == 1 and max(counts) >= 1024
        assert 0.0 in plan.kernel_us and max(plan.kernel_us) >= 100.0
        assert all(64 in {n for k2, n in plan.cells() if k2 == k} for k in plan.kernel_us)  # gain at 64 exists
    # a slow host (10 µs per launch, 2 µs per node) stays within a few seconds of the budgets below
    assert estimate_seconds(QUICK_PLAN, launch_us=10, node_us=2, fixed_us=30) < 5
    assert estimate_seconds(DEFAULT_PLAN, launch_us=10, node_us=2, fixed_us=30) < 25


def test_plans_fit_their_wall_time_on_an_h200():
    """--quick in 10 s and the default in 30 s, the whole process (tests/test_crossover_wall_gpu.py
    times them). Outside the estimate: start-up (torch, the CUDA context, cupy) and the fit,
    up to 6 s, and the default's kernel trace, a process's first CUPTI session: about 4 s on
    the H200, 5 s with the profiler's own imports. A default plan estimated at 19.4 s took
    28.8 and 30.7 s there. --quick runs no trace."""
    assert QUICK_PLAN.trace_launches == 0 and DEFAULT_PLAN.trace_launches > 0
    startup_and_fit_s, trace_s = 6.0, 5.0
    assert estimate_seconds(QUICK_PLAN) <= 10.0 - startup_and_fit_s
    assert estimate_seconds(DEFAULT_PLAN) <= 30.0 - startup_and_fit_s - trace_s


def test_the_calibration_plan_fits_in_analyze_and_touches_nothing_the_user_would_notice():
    from launchprof.crossover.calibrate import BUDGET_S
    from launchprof.crossover.plans import CALIBRATION_PLAN

    # a slow host (10 µs per launch, 2 µs per node) still leaves most of the budget for start-up
    assert estimate_seconds(CALIBRATION_PLAN, launch_us=10, node_us=2, fixed_us=30) < BUDGET_S / 4
    assert not CALIBRATION_PLAN.use_cupy and CALIBRATION_PLAN.trace_launches == 0 and not CALIBRATION_PLAN.measure_update
    assert CALIBRATION_PLAN.host_rounds >= 3 and 20.0 in CALIBRATION_PLAN.kernel_us  # rounds; a kernel long enough for the gap
    for plan in (QUICK_PLAN, DEFAULT_PLAN, CALIBRATION_PLAN):
        assert set(plan.host_cells()) | set(plan.device_cells()) == set(plan.cells())
        assert all(k == 0.0 for k, _ in plan.host_cells())


def test_guard_turns_failures_into_notes_and_lets_ctrl_c_through():
    rec = _Recorder(progress=NoProgress())
    assert _guarded(rec, "floor", lambda: (_ for _ in ()).throw(RuntimeError("CUDA error: boom\nmore"))) is False
    assert rec.notes == ["floor failed: RuntimeError: CUDA error: boom"]

    def interrupted_capture():
        try:
            raise KeyboardInterrupt
        finally:
            raise RuntimeError("capture_end failed")  # what a with-block's __exit__ can do

    with pytest.raises(KeyboardInterrupt):
        _guarded(rec, "cell", interrupted_capture)
    try:
        interrupted_capture()
    except RuntimeError as exc:
        assert _caused_by_interrupt(exc)


@pytest.mark.parametrize("path", sorted(DATA.glob("crossover_*.json")) or [None], ids=lambda p: p.name if p else "none")
def test_recorded_gpu_profile_refits_consistently(path):
    """Profiles recorded by `launchprof crossover -o tests/data/crossover_<gpu>.json` on real GPUs."""
    assert path is not None, "no recorded profile in tests/data (crossover_<gpu>.json): record one on a GPU"
    p = refit(profile_from_dict(json.loads(path.read_text())))
    for value in (p.eager_op_us, p.raw_launch_us, p.graph_launch_fixed_us, p.graph_node_us, p.floor_node_us):
        assert value is not None and value.median > 0
    assert p.graph_node_us.median < p.eager_op_us.median  # a replayed node is cheaper than a torch op
    assert p.graph_node_us.median / p.floor_node_us.median < 1.5  # issue 4's target
    assert p.crossover and p.crossover[0].nodes_crossover_torch_op is not None
