"""Speedup prediction and breakeven, on CPU, with the H200 numbers of docs/architecture.md ("Observed on an H200")."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from launchprof.crossover.fit import derive_profile
from launchprof.crossover.profile import Interval
from launchprof.crossover.simulate import simulate_samples
from launchprof.crossover.sweep import DEFAULT_PLAN
from launchprof.crossover.replay_model import breakeven_replays, finite_median, node_excess_us, predict_speedup, replay_model
from launchprof.model.core import Machine
from launchprof.model.stats import Estimate

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")


def exact(v: float) -> Interval:
    return Interval(v, v, v)


@pytest.fixture(scope="module")
def profile():
    """An H200-like profile: graph launch 9 µs, 0.95 µs per node, gap 0.4 µs, empty kernel traced at 1.0 µs."""
    p = derive_profile(simulate_samples(DEFAULT_PLAN, noise=0.0), H200)
    return dataclasses.replace(
        p,
        graph_launch_fixed_us=exact(9.0),
        graph_node_us=exact(0.95),
        floor_node_us=exact(0.9),
        graph_gap_us=exact(0.4),
        empty_kernel_us=exact(1.0),
        capture_node_us=exact(2.0),
        instantiate_node_us=exact(7.0),
        instantiate_fixed_us=exact(20.0),
    )


def test_tiny_add_ops_predict_about_seven_x(profile):
    # H200 (docs/architecture.md): tiny x.add_(1.0) ops cost about 7 µs each eagerly, about 1 µs per node replayed.
    n = 200
    pred = predict_speedup(n, [1.3] * n, gpu_busy_us=1.3 * n, launch_api_us=4.0 * n, eager_step_us=7.0 * n, profile=profile)
    assert pred.replay_step_us_estimate == pytest.approx(9.0 + 0.95 * n)
    assert 6.0 < pred.speedup < 8.0
    assert pred.bound == "launch"
    assert "7.0x" in pred.explanation and "launch calls" in pred.explanation


def test_large_elementwise_ops_gain_about_five_percent(profile):
    # H200 (docs/architecture.md): 16M-element ops, about 35 µs each: replay gains only about 5%.
    n = 20
    eager_step = 6.0 + n * (35.0 + 1.8)
    pred = predict_speedup(n, 35.0, gpu_busy_us=35.0 * n, launch_api_us=5.0 * n, eager_step_us=eager_step, profile=profile)
    assert pred.bound == "gpu"
    assert pred.replay_step_us_estimate == pytest.approx(9.0 + n * (35.0 - 0.6))
    assert 1.02 < pred.speedup < 1.10


def test_graphs_can_hurt_and_the_prediction_says_so(profile):
    # H200 (docs/architecture.md): two 8192² bf16 matmuls replayed about 14% slower than eager.
    pred = predict_speedup(2, [1450.0, 1450.0], gpu_busy_us=2900.0, launch_api_us=10.0, eager_step_us=2900.0, profile=profile)
    assert pred.speedup < 1.0
    assert "would not help" in pred.explanation


def test_kernel_list_median_and_busy_time_agree_for_uniform_kernels(profile):
    by_list = predict_speedup(50, [3.0] * 50, None, None, 500.0, profile)
    by_median = predict_speedup(50, 3.0, None, None, 500.0, profile)
    by_busy = predict_speedup(50, None, 150.0, None, 500.0, profile)
    assert by_list.replay_step_us_estimate == pytest.approx(by_median.replay_step_us_estimate)
    assert by_busy.replay_step_us_estimate == pytest.approx(by_median.replay_step_us_estimate)


def test_a_short_kernel_list_stands_for_the_whole_step(profile):
    full = predict_speedup(100, [2.0, 8.0] * 50, None, None, 900.0, profile)
    sample = predict_speedup(100, [2.0, 8.0], None, None, 900.0, profile)
    assert sample.replay_step_us_estimate == pytest.approx(full.replay_step_us_estimate)


def test_tiny_kernels_never_cost_less_than_a_node(profile):
    pred = predict_speedup(100, [0.1] * 100, None, None, 700.0, profile)
    assert pred.replay_step_us_estimate == pytest.approx(9.0 + 0.95 * 100)


def test_prediction_needs_only_eager_numbers(profile):
    # capture failed: no replay numbers at all, only the eager trace's counts
    pred = predict_speedup(120, None, None, None, 900.0, profile)
    assert pred.speedup == pytest.approx(900.0 / (9.0 + 0.95 * 120))


def test_without_a_profile_or_kernels_there_is_no_prediction(profile):
    assert predict_speedup(10, None, None, None, 100.0, None).speedup is None
    assert "launchprof crossover" in predict_speedup(10, None, None, None, 100.0, None).explanation
    assert predict_speedup(0, None, None, None, 100.0, profile).speedup is None
    assert predict_speedup(10, None, None, None, None, profile).speedup is None
    partial = dataclasses.replace(profile, graph_launch_fixed_us=None)
    assert "partial" in predict_speedup(10, None, None, None, 100.0, partial).explanation


def test_node_excess_falls_back_to_the_floor(profile):
    assert node_excess_us(profile, 0.95) == pytest.approx(0.4 - 1.0)
    no_gap = dataclasses.replace(profile, graph_gap_us=None)
    assert node_excess_us(no_gap, 0.95) == pytest.approx(0.9 - 1.0)


def test_without_a_traced_empty_kernel_the_excess_is_zero_with_the_gap_as_its_upper_bound(profile):
    """A calibration profile has no traced empty kernel: the whole gap per node would count a
    traced kernel's own fixed cost twice (H200: calibration gaps 0.78 and 1.45 µs, against
    0.155 µs where both were measured)."""
    untraced = dataclasses.replace(profile, empty_kernel_us=None)
    assert node_excess_us(untraced, 0.95) == 0.0
    model = replay_model(untraced)
    assert model.excess.median == model.excess.low == 0.0
    assert model.excess.high == pytest.approx(profile.graph_gap_us.high)
    kernels = [3.0] * 10
    traced = predict_speedup(10, kernels, 30.0, None, 200.0, profile)
    bare = predict_speedup(10, kernels, 30.0, None, 200.0, untraced)
    # 10 nodes of 3 µs traced: each costs its traced time, the excess adds nothing
    assert bare.replay_step_us_estimate == pytest.approx(profile.graph_launch_fixed_us.median + 30.0)
    assert bare.low < bare.speedup <= bare.high and traced.replay_step_us_estimate != bare.replay_step_us_estimate


def test_breakeven_replays():
    # H200 (docs/architecture.md): capture + instantiate about 9 µs per node; 100 tiny ops: 7 µs eager, ~1 µs replayed
    assert breakeven_replays(900.0, 700.0, 109.0) == pytest.approx(900.0 / 591.0)
    assert breakeven_replays(900.0, 700.0, 700.0) is None  # saves nothing: never pays back
    assert breakeven_replays(900.0, 700.0, 800.0) is None
    assert breakeven_replays(None, 700.0, 100.0) is None
    assert breakeven_replays(900.0, None, 100.0) is None


def test_a_few_long_kernels_among_many_short_ones_count(profile):
    # 99 tiny kernels and one 500 µs GEMM: the median alone would miss the GEMM
    busy = 99 * 1.3 + 500.0
    pred = predict_speedup(100, 1.3, busy, None, 1300.0, profile)
    assert pred.replay_step_us_estimate == pytest.approx(9.0 + busy + 100 * (0.4 - 1.0))


# --- interval and basis ----------------------------------------------------------------

DATA = __import__("pathlib").Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def recorded():
    """The two recorded H200 profiles (full and quick sweeps); the test fails if they are gone."""
    from launchprof.crossover.profile import load_profile

    full, quick = DATA / "profile.json", DATA / "profile-quick.json"
    assert full.is_file() and quick.is_file(), "recorded H200 profiles missing from tests/data"
    return load_profile(full).profile, load_profile(quick).profile


def tiny_step(profile, **kw):
    n = 200
    return predict_speedup(n, [1.3] * n, 1.3 * n, 4.0 * n, 7.0 * n, profile, extra_launches=2, **kw)


def test_recorded_profiles_give_an_interval_around_the_median(recorded):
    for p in recorded:
        pred = tiny_step(p)
        assert pred.low is not None and pred.high is not None
        assert pred.low < pred.speedup < pred.high
    full = tiny_step(recorded[0])
    assert full.high / full.low < 1.25  # the full sweep pins its coefficients to a few percent


def test_the_quick_profile_is_less_certain_than_the_full_one(recorded):
    full, quick = (tiny_step(p) for p in recorded)
    assert (quick.high - quick.low) / quick.speedup > (full.high - full.low) / full.speedup


def test_exact_coefficients_and_an_exact_eager_step_give_a_point(profile):
    exact_profile = dataclasses.replace(profile, eager_op_us=exact(7.0))
    pred = tiny_step(exact_profile)
    assert pred.low == pytest.approx(pred.speedup) and pred.high == pytest.approx(pred.speedup)


def test_the_eager_steps_spread_widens_the_interval(profile):
    exact_profile = dataclasses.replace(profile, eager_op_us=exact(7.0))
    pred = tiny_step(exact_profile, eager_step_ci=Estimate(1400.0, 1330.0, 1470.0))
    assert pred.low == pytest.approx(pred.speedup * 1330.0 / 1400.0, rel=0.02)
    assert pred.high == pytest.approx(pred.speedup * 1470.0 / 1400.0, rel=0.02)


def test_a_wide_coefficient_moves_the_interval_the_way_the_model_says(profile):
    # one node, so the graph launch's fixed cost sets the replay: 9 µs in [6, 12]
    p = dataclasses.replace(profile, graph_launch_fixed_us=Interval(9.0, 6.0, 12.0), eager_op_us=exact(7.0))
    pred = predict_speedup(1, [0.5], None, None, 50.0, p)
    assert pred.speedup == pytest.approx(50.0 / 9.95)
    assert pred.high == pytest.approx(50.0 / (6.0 + 0.95), rel=0.08)
    assert pred.low == pytest.approx(50.0 / (12.0 + 0.95), rel=0.08)
    assert tiny_step(p).low == tiny_step(p).low  # seeded: the same inputs give the same interval


def test_basis_names_the_profile_and_the_inputs(recorded):
    full, quick = recorded
    pred = tiny_step(full, eager_step_ci=Estimate(1400.0, 1350.0, 1450.0), profile_source="cached at /x/p.json")
    for part in ("NVIDIA H200", "driver 580.159.04", "torch 2.11.0+cu130", "full", "created 2026-11-29", "cached at /x/p.json",
                 "200 graph nodes per step", "200 node times", "GPU busy 260.0 µs", "eager step median 1400.0 µs [1350.0, 1450.0]"):
        assert part in pred.basis, (part, pred.basis)
    assert "quick" in tiny_step(quick).basis
    noisy = dataclasses.replace(quick, noisy=True, noisy_reason="x")
    assert "NOISY" in tiny_step(noisy).basis


def test_the_prediction_carries_the_eager_steps_interval_and_its_source(profile):
    from launchprof.crossover.replay_model import eager_step_interval
    from launchprof.model.step_timing import Stats

    step = Stats(1400.0, 1300.0, 1500.0, 50)
    ci = eager_step_interval(step)
    low, high = ci.low, ci.high
    assert low < 1400.0 < high and high - low < 200.0 / 2  # the median is pinned tighter than p10..p90
    pred = predict_speedup(200, 1.3, 260.0, 800.0, 1400.0, profile, eager_step_ci=ci, profile_source="--profile p.json")
    assert pred.low < pred.speedup < pred.high and "--profile p.json" in pred.basis
    assert pred.speedup == pytest.approx(1400.0 / (9.0 + 0.95 * 200))
    assert eager_step_interval(Stats(1.0, 1.0, 1.0, 1)) is None


def test_the_explanation_states_the_interval(recorded):
    pred = tiny_step(recorded[0])
    assert f"about {pred.speedup:.1f}x (95% interval {pred.low:.1f}–{pred.high:.1f}x)" in pred.explanation


def test_finite_median_is_none_for_an_interval_not_measured():
    assert finite_median(SimpleNamespace(median=3)) == 3.0 and isinstance(finite_median(SimpleNamespace(median=3)), float)
    assert [finite_median(x) for x in (None, SimpleNamespace(median=None), SimpleNamespace(median=float("nan")))] == [None, None, None]


def test_the_rng_prologue_fill_count_is_stated_once():
    """The prediction's added fills and the report's node count read one constant: no module
    but launchprof.crossover.replay_model assigns a number of RNG fills of its own."""
    import ast
    from pathlib import Path

    import launchprof
    from launchprof.crossover import replay_model as predict
    from launchprof.render import figures

    owners = []
    for path in Path(launchprof.__file__).parent.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
                owners += [(path.name, t.id) for t in node.targets if isinstance(t, ast.Name) and "FILLS" in t.id]
    assert owners == [("replay_model.py", "RNG_PROLOGUE_FILLS")]
    assert figures.RNG_PROLOGUE_FILLS is predict.RNG_PROLOGUE_FILLS == 2
