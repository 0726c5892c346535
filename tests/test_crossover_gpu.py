"""The real sweep on a CUDA device: `crossover --quick` end to end, and Ctrl-C mid-sweep.

Skips cleanly without CUDA. What it checks is what issue 4 asks of the numbers:
positive, growing with node count (within noise at 1-4 nodes) and kernel duration, and
consistent with each other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA device", allow_module_level=True)

from launchprof.crossover.fit import derive_profile, refit  # noqa: E402
from launchprof.crossover.lines import curve, grouped  # noqa: E402
from launchprof.crossover.profile import Kind, load_profile  # noqa: E402
from launchprof.crossover.sweep import QUICK_PLAN, NoProgress, SweepPlan, run_sweep  # noqa: E402
from launchprof.model.machine import collect_machine

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """`launchprof crossover --quick -f json -o ... --plot ...`, once for the module."""
    tmp = tmp_path_factory.mktemp("crossover")
    out, plot = tmp / "profile.json", tmp / "curves.png"
    env = dict(os.environ, LAUNCHPROF_CACHE_DIR=str(tmp / "cache"))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "launchprof", "crossover", "--quick", "-f", "json", "-o", str(out), "--plot", str(plot)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    wall = time.perf_counter() - started
    sys.stderr.write(done.stderr[-4000:])
    assert done.returncode == 0, done.stderr[-2000:]
    return {"stdout": done.stdout, "out": out, "plot": plot, "wall": wall, "cache": tmp / "cache" / "profiles"}


def test_quick_is_quick_and_writes_everything(quick_run):
    assert quick_run["wall"] < 20.0, f"--quick took {quick_run['wall']:.1f} s (issue 4 asks for 15 s)"
    printed = json.loads(quick_run["stdout"])
    assert printed["partial"] is False
    assert quick_run["plot"].read_bytes().startswith(b"\x89PNG")
    assert list(quick_run["cache"].glob("*.json"))
    assert load_profile(quick_run["out"]).profile.graph_node_us is not None


def test_coefficients_are_positive(quick_run):
    p = load_profile(quick_run["out"]).profile
    print("notes:", *p.notes, sep="\n  ")
    print(p.model)
    names = ("eager_op_us", "raw_launch_us", "graph_launch_fixed_us", "graph_node_us", "floor_node_us", "instantiate_node_us", "capture_node_us")
    for name in names:
        value = getattr(p, name)
        assert value is not None, f"{name} missing; notes: {p.notes}"
        assert value.median > 0, f"{name} = {value}"
        assert value.low <= value.median <= value.high, f"{name} = {value}"
    assert p.cycles_per_us is not None and 200 < p.cycles_per_us < 5000
    print("spread across rounds:", p.spread, "noisy:", p.noisy_reason)
    assert {"eager_op_us", "graph_launch_fixed_us", "instantiate_node_us"} <= set(p.spread)
    assert {s.round for s in p.samples if s.kind == Kind.EAGER_OP} == set(range(QUICK_PLAN.host_rounds))


def _iqr_by_count(samples, kind: str, kernel_us: float) -> dict[int, float]:
    """Interquartile range of each point's samples (µs): the noise of one median."""
    import numpy as np

    return {n: float(np.subtract(*np.percentile(v, [75, 25]))) for n, v in grouped(samples, kind, kernel_us).items() if v}


def test_times_grow_with_nodes_and_with_kernel_duration(quick_run):
    p = load_profile(quick_run["out"]).profile
    for kind in (Kind.EAGER_LATENCY, Kind.GRAPH_LATENCY):
        previous: dict[int, float] = {}
        for k in QUICK_PLAN.kernel_us:
            points = curve(p.samples, kind, k)
            assert len(points) >= 4, (kind, k)
            medians = [m for _, m in points]
            spread = _iqr_by_count(p.samples, kind, k)
            for (na, a), (nb, b) in zip(points, points[1:]):
                # From 4 nodes down the fixed launch cost dominates (H200, 2026-12-02: 13.0 µs
                # at 1 node, 11.3 at 4): a step down there is allowed within the two points' noise.
                within_noise = na <= 4 and b >= a - (spread[na] + spread[nb])
                assert b >= 0.9 * a or within_noise, (kind, k, points, spread)
            assert medians[-1] > 4 * medians[0], (kind, k, points)  # 1 -> >= 64 nodes
            for n, m in points:
                if n in previous and n >= 16:
                    assert m >= 0.9 * previous[n], (kind, k, n)
            previous = dict(points)


def test_results_are_consistent_with_each_other(quick_run):
    p = load_profile(quick_run["out"]).profile
    # a replayed node of the shortest kernels costs about the floor of empty kernels (issue 4: within 1.5x)
    ratio = p.graph_node_us.median / p.floor_node_us.median
    assert 1 / 1.5 < ratio < 1.5, f"graph_node {p.graph_node_us.median:.3f} vs floor {p.floor_node_us.median:.3f}"
    # eager torch ops cost more per launch than a bare launch; a replayed node less than either
    assert p.eager_op_us.median > 0.8 * p.raw_launch_us.median
    assert p.graph_node_us.median < p.eager_op_us.median
    # the spin calibration holds: per-node time grows about 1 µs per µs of kernel
    if p.kernel_scale is not None:
        assert 0.8 < p.kernel_scale.median < 1.25, p.kernel_scale
    # the slope of long kernels is their duration plus a small gap
    long = next(f for f in p.fits if f.mode == "latency" and f.kernel_us == 100.0)
    assert 95.0 < long.graph.per_node_us.median < 115.0
    # short kernels: graphs win early; long ones: they gain little
    assert p.crossover[0].nodes_crossover_torch_op is not None and p.crossover[0].nodes_crossover_torch_op <= 64
    assert abs(p.crossover[-1].gain_at_64_nodes) < 0.1
    # refitting the recorded samples gives the same profile
    again = refit(p)
    assert again.graph_node_us.median == pytest.approx(p.graph_node_us.median, rel=1e-3)


def test_update_and_instantiate_were_measured(quick_run):
    p = load_profile(quick_run["out"]).profile
    assert p.instantiate_node_us is not None, p.notes
    if p.update_node_us is None:
        pytest.skip(f"cudaGraphExecUpdate not measured: {[n for n in p.notes if 'update' in n]}")
    assert p.update_node_us.median > 0 and p.reinstantiate_node_us.median > 0


class _InterruptAt:
    """A progress sink that presses Ctrl-C when a phase starts advancing."""

    def __init__(self, phase: str) -> None:
        self.phase_name = phase

    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, name: str, steps: int = 1) -> None:
        if name == self.phase_name:
            raise KeyboardInterrupt

    def done(self, name: str) -> None:
        pass


def test_ctrl_c_mid_sweep_returns_a_partial_result():
    tiny = SweepPlan(
        name="tiny", kernel_us=(0.0, 5.0), node_counts=(1, 8, 64), max_call_us=2000.0, always_nodes=64,
        latency_reps=3, throughput_samples=2, throughput_min_us=200.0, launch_counts=(16, 64), launch_reps=3,
        floor_counts=(1, 16, 64), floor_reps=3, setup_counts=(8, 64), setup_reps=2, trace_launches=20,
    )
    result = run_sweep(tiny, _InterruptAt("graph sweep"))
    assert result.partial
    assert any("interrupted during graph sweep" in n for n in result.notes)
    kinds = {s.kind for s in result.samples}
    assert "eager_op" in kinds and any(k.startswith("floor:") for k in kinds)
    profile = derive_profile(result.samples, collect_machine(), partial=True, notes=result.notes)
    assert profile.partial and profile.eager_op_us is not None
    torch.cuda.synchronize()  # the device is still usable afterwards
    assert run_sweep(tiny, NoProgress()).partial is False
