"""Host coefficients measured in rounds: median of rounds, spread, and the noisy flag (CPU)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from launchprof.crossover import profile as prof
from launchprof.crossover.fit import derive_profile, refit
from launchprof.crossover.plans import CALIBRATION_PLAN, QUICK_PLAN
from launchprof.crossover.simulate import SimulatedDevice, simulate_samples
from launchprof.crossover.spread import NOISY_SPREAD, relative_spread
from launchprof.render.crossover_text import print_profile, render_json
from launchprof.model.core import Machine

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")
TRUE = SimulatedDevice()


def text_of(p: prof.DeviceProfile) -> str:
    out = io.StringIO()
    print_profile(p, Console(file=out, width=200, highlight=False, color_system=None))
    return out.getvalue()


def test_steady_rounds_are_not_noisy_and_record_their_spread():
    p = derive_profile(simulate_samples(QUICK_PLAN, noise=0.02), H200, quick=True)
    assert not p.noisy and p.noisy_reason is None
    assert {"eager_op_us", "raw_launch_us", "graph_launch_fixed_us", "instantiate_node_us", "update_node_us"} <= set(p.spread)
    assert all(0 <= v < NOISY_SPREAD for v in p.spread.values()), p.spread
    assert p.eager_op_us.median == pytest.approx(TRUE.eager_op_us, rel=0.03)
    assert "NOISY" not in text_of(p)


def test_a_host_that_drifts_between_rounds_flags_the_profile_and_the_output_says_so():
    samples = simulate_samples(QUICK_PLAN, noise=0.02, round_drift=(1.0, 1.45, 0.9))
    p = derive_profile(samples, H200, quick=True)
    assert p.noisy
    assert p.spread["eager_op_us"] > NOISY_SPREAD
    assert "eager_op_us" in p.noisy_reason and "quieter machine" in p.noisy_reason
    # the median of rounds is the middle round, not the mean the drift would pull up
    assert p.eager_op_us.median == pytest.approx(TRUE.eager_op_us, rel=0.05)
    assert p.eager_op_us.low <= 0.9 * TRUE.eager_op_us * 1.03 and p.eager_op_us.high >= 1.45 * TRUE.eager_op_us * 0.97
    text = text_of(p)
    assert "NOISY" in text and "Noisy profile:" in text and "eager_op_us by" in text
    assert "NOISY: host coefficients moved between rounds" in p.model
    data = json.loads(render_json(p))
    assert data["noisy"] is True and data["spread"]["eager_op_us"] > NOISY_SPREAD


def test_noise_survives_the_file_and_a_refit(tmp_path):
    p = derive_profile(simulate_samples(QUICK_PLAN, round_drift=(1.0, 1.3, 1.0)), H200, quick=True)
    path = tmp_path / "p.json"
    path.write_text(p.to_json())
    loaded = prof.load_profile(path).profile
    assert loaded.noisy and loaded.spread == p.spread
    assert {s.round for s in loaded.samples if s.kind == "eager_op"} == {0, 1, 2}
    again = refit(loaded)
    assert again.noisy and again.spread == pytest.approx(p.spread)


def test_two_steady_runs_agree_within_fifteen_percent():
    a = derive_profile(simulate_samples(QUICK_PLAN, seed=1, noise=0.05), H200)
    b = derive_profile(simulate_samples(QUICK_PLAN, seed=2, noise=0.05), H200)
    for name in ("eager_op_us", "raw_launch_us", "graph_launch_fixed_us", "instantiate_node_us", "update_node_us"):
        x, y = getattr(a, name).median, getattr(b, name).median
        assert abs(x - y) / max(x, y) < 0.15, (name, x, y)


def test_relative_spread():
    assert relative_spread([10.0]) is None
    assert relative_spread([9.0, 10.0, 11.0]) == pytest.approx(0.2)
    assert relative_spread([0.0, 0.0]) is None


def test_the_calibration_plan_has_what_the_prediction_needs():
    p = derive_profile(simulate_samples(CALIBRATION_PLAN), H200, quick=True)
    for name in ("eager_op_us", "graph_launch_fixed_us", "graph_node_us", "floor_node_us", "graph_gap_us", "capture_node_us", "instantiate_node_us"):
        assert getattr(p, name) is not None, name
    assert p.empty_kernel_us is None and p.update_node_us is None  # not measured inside analyze
    assert p.graph_node_us.median == pytest.approx(TRUE.graph_node_us, rel=0.1)
