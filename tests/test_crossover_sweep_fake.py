"""The sweep's control flow on CPU, with a fake device: phases, rounds, order, and the calibration end to end.

The timings are meaningless here; what this checks is what the code does with them: every
host coefficient in every round, odd rounds reversed, the eager op timed before cupy is
loaded, each cell's graph captured once, the budget honoured, and ensure_profile's result.
"""

from __future__ import annotations

import contextlib
import types

import pytest

torch = pytest.importorskip("torch")

from launchprof.crossover import calibrate, host, sweep  # noqa: E402
from launchprof.crossover.gpu import Gpu  # noqa: E402
from launchprof.crossover.plans import CALIBRATION_PLAN, QUICK_PLAN  # noqa: E402
from launchprof.crossover.profile import Kind, load_profile  # noqa: E402
from launchprof.crossover.recorder import NoProgress  # noqa: E402


class FakeGraph:
    def __init__(self, keep_graph: bool = False) -> None:
        self.keep_graph = keep_graph

    def replay(self) -> None:
        pass

    def instantiate(self) -> None:
        pass


class FakeEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        pass

    def record(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, other: FakeEvent) -> float:
        return 0.001


LOG: list[str] = []


class FakeGpu(Gpu):
    """Gpu with the CUDA parts faked: captures and launches are counted, not run."""

    captures = 0

    def __init__(self, rec) -> None:
        def capture_ctx(graph, capture_error_mode="global"):
            FakeGpu.captures += 1
            return contextlib.nullcontext()

        cuda = types.SimpleNamespace(CUDAGraph=FakeGraph, Event=FakeEvent, graph=capture_ctx, current_stream=lambda: types.SimpleNamespace(cuda_stream=0))
        self.torch = types.SimpleNamespace(cuda=cuda)
        self.sync = lambda: None
        self.sleep = lambda cycles: None
        self.tiny = torch.zeros(1)
        self.cycles_per_us = 1980.0
        self.keep_graph = True
        self.cupy_empty = None
        self._graphs = {}

    def load_cupy(self, rec):
        LOG.append("cupy")
        return None


@pytest.fixture
def fake_device(monkeypatch):
    LOG.clear()
    FakeGpu.captures = 0
    monkeypatch.setattr(sweep, "Gpu", FakeGpu)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    real_eager_op = host.eager_op

    def logged_eager_op(gpu, plan, rec):
        LOG.append(f"eager_op:{rec.round}")
        real_eager_op(gpu, plan, rec)

    def logged_setup(gpu, plan, rec):
        LOG.append(f"setup:{rec.round}")
        real_setup(gpu, plan, rec)

    real_setup = host.setup_costs
    monkeypatch.setattr(host, "eager_op", logged_eager_op)
    monkeypatch.setattr(host, "setup_costs", logged_setup)
    return LOG


def test_every_round_measures_every_host_coefficient_in_alternating_order(fake_device):
    result = sweep.run_sweep(CALIBRATION_PLAN, NoProgress())
    assert not result.partial, result.notes
    rounds = {k: {s.round for s in result.samples if s.kind == k} for k in (Kind.EAGER_OP, Kind.INSTANTIATE, Kind.GRAPH_LATENCY)}
    every = set(range(CALIBRATION_PLAN.host_rounds))
    assert CALIBRATION_PLAN.host_rounds == 5
    assert rounds[Kind.EAGER_OP] == rounds[Kind.INSTANTIATE] == every
    assert rounds[Kind.GRAPH_LATENCY] == every | {None}  # shortest kernels per round, the 20 µs cells once
    # even rounds forward (eager op first), odd rounds reversed (set-up first); cupy never in calibration
    assert fake_device == ["eager_op:0", "setup:0", "setup:1", "eager_op:1", "eager_op:2", "setup:2", "setup:3", "eager_op:3", "eager_op:4", "setup:4"]
    counts = {s.count for s in result.samples if s.kind == Kind.EAGER_OP}
    assert counts == set(CALIBRATION_PLAN.launch_counts)
    # each cell's graph once; set-up captures are the measurement itself, one per rep per count per round
    setup = CALIBRATION_PLAN.host_rounds * CALIBRATION_PLAN.setup_reps * len(CALIBRATION_PLAN.setup_counts)
    assert FakeGpu.captures == len(CALIBRATION_PLAN.cells()) + len(CALIBRATION_PLAN.floor_counts) + setup
    assert any("kernel trace skipped" in n for n in result.notes)


def test_cupy_loads_only_after_the_host_rounds(fake_device):
    sweep.run_sweep(QUICK_PLAN, NoProgress())
    assert fake_device.index("cupy") > max(i for i, e in enumerate(fake_device) if e.startswith("eager_op"))


def test_quick_runs_no_kernel_trace_and_every_phase_is_timed(fake_device):
    from launchprof.render.crossover_text import sweep_time_line

    result = sweep.run_sweep(QUICK_PLAN, NoProgress())
    assert not result.partial, result.notes
    assert not [s for s in result.samples if s.kind.startswith(f"{Kind.TRACED}:")]
    assert any(n.startswith("kernel trace skipped") for n in result.notes)
    assert [name for name, _ in result.phase_s] == [name for name, _, _ in sweep.PHASES]
    assert all(seconds >= 0 for _, seconds in result.phase_s)
    assert sum(seconds for _, seconds in result.phase_s) <= result.elapsed_s
    line = sweep_time_line(result.elapsed_s, result.phase_s)
    assert line.startswith(f"sweep took {result.elapsed_s:.1f} s (calibrate ") and "kernel trace" in line


def test_the_budget_stops_the_sweep_between_phases(fake_device, monkeypatch):
    result = sweep.run_sweep(CALIBRATION_PLAN, NoProgress(), budget_s=0.0)
    assert result.partial and any("budget" in n for n in result.notes)
    assert not result.samples


def test_ensure_profile_end_to_end_on_the_fake_device(fake_device, monkeypatch, tmp_path):
    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path))
    restored = []
    monkeypatch.setattr(calibrate, "_UserState", lambda: types.SimpleNamespace(restore=lambda: restored.append(1)))
    got = calibrate.ensure_profile({"gpu": "Fake GPU", "driver": "1", "cuda": "13.0", "torch": torch.__version__, "python": "3"})
    assert got["status"] == "measured", got
    p = load_profile(got["path"]).profile
    assert p.plan == "calibration" and p.eager_op_us is not None and set(p.spread) >= {"eager_op_us", "instantiate_node_us"}
    assert restored == [1]
