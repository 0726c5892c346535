"""ensure_profile on CPU: the cached path, the measured path and the failure paths, with fakes for the GPU."""

from __future__ import annotations

import json

import pytest

from launchprof.crossover import calibrate
from launchprof.crossover import profile as prof
from launchprof.crossover import sweep
from launchprof.crossover.fit import derive_profile
from launchprof.crossover.plans import CALIBRATION_PLAN, QUICK_PLAN
from launchprof.crossover.simulate import simulate_samples
from launchprof.model.core import Machine

MACHINE_EVENT = {
    "gpu": "NVIDIA H200", "driver": "580.95.05", "cuda": "13.0", "torch": "2.11.0+cu130", "python": "3.12.3",
    "cpu_model": "Xeon", "cpu_cores": 16, "load_avg": 0.1, "gpu_other_processes": False,
}
H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")


class FakeState:
    restored = 0

    def __init__(self) -> None:
        FakeState.restored = 0

    def restore(self) -> None:
        FakeState.restored += 1


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(calibrate, "_UserState", FakeState)
    return tmp_path / "cache" / "profiles"


def fake_sweep(monkeypatch, samples=None, notes=(), partial=False, error: BaseException | None = None):
    calls = []

    def run(plan, progress=None, budget_s=None):
        calls.append((plan, budget_s))
        if error is not None:
            raise error
        for name, total, _ in sweep.PHASES:
            progress.phase(name, total(plan))
        for name, total, _ in sweep.PHASES:
            progress.advance(name)
            progress.done(name)
        return sweep.SweepResult(samples=tuple(samples if samples is not None else simulate_samples(plan)), notes=tuple(notes), partial=partial, elapsed_s=0.1)

    monkeypatch.setattr(sweep, "run_sweep", run)
    return calls


def test_a_cached_profile_is_used_without_measuring(cache, monkeypatch):
    path = prof.save_to_cache(derive_profile(simulate_samples(QUICK_PLAN), H200, quick=True))
    calls = fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "cached" and got["path"] == str(path) and calls == []
    assert str(path) in got["message"] and got["seconds"] >= 0
    assert FakeState.restored == 0  # nothing was touched, nothing to restore


def test_no_cache_measures_the_calibration_plan_and_caches_it(cache, monkeypatch):
    calls = fake_sweep(monkeypatch)
    seen: list[tuple[str, float]] = []
    got = calibrate.ensure_profile(MACHINE_EVENT, lambda label, fraction: seen.append((label, fraction)))
    assert got["status"] == "measured", got
    assert calls == [(CALIBRATION_PLAN, calibrate.BUDGET_S)]
    loaded = prof.load_profile(got["path"], H200)
    assert loaded.warnings == () and loaded.profile.plan == "calibration" and loaded.profile.quick
    assert loaded.profile.graph_launch_fixed_us is not None
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and all(label.startswith("calibrating") for label, _ in seen)
    assert FakeState.restored == 1
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached"  # the next run finds it


def test_a_broken_cache_file_is_measured_again(cache, monkeypatch):
    cache.mkdir(parents=True)
    (cache / f"{prof.profile_slug(H200)}.json").write_text('{"schema_version": 1, "mach')
    fake_sweep(monkeypatch)
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "measured"
    json.loads((cache / f"{prof.profile_slug(H200)}.json").read_text())


def test_a_failing_device_is_one_line_and_never_raises(cache, monkeypatch):
    fake_sweep(monkeypatch, error=RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be reported later"))
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "failed" and got["path"] is None
    assert got["message"] == "calibration failed: RuntimeError: CUDA error: out of memory"
    assert FakeState.restored == 1
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_a_sweep_without_graph_coefficients_fails_and_caches_nothing(cache, monkeypatch):
    eager_only = [s for s in simulate_samples(CALIBRATION_PLAN) if s.kind == "eager_op"]
    fake_sweep(monkeypatch, samples=eager_only, notes=["floor failed: RuntimeError: boom"])
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "failed" and "no graph replay coefficients" in got["message"] and "boom" in got["message"]
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_a_broken_progress_callback_does_not_cost_the_calibration(cache, monkeypatch):
    fake_sweep(monkeypatch)

    def broken(label: str, fraction: float) -> None:
        raise ValueError("closed pipe")

    assert calibrate.ensure_profile(MACHINE_EVENT, broken)["status"] == "measured"


def test_a_sparse_or_missing_machine_event(cache, monkeypatch):
    fake_sweep(monkeypatch)
    got = calibrate.ensure_profile({"gpu": "NVIDIA H200"})  # unknown driver/torch: still one cache key
    assert got["status"] == "measured" and "unknown" in got["path"]
    bad = calibrate.ensure_profile(None)  # type: ignore[arg-type]
    assert bad["status"] == "failed" and bad["message"].startswith("calibration failed: AttributeError")


def test_ctrl_c_during_calibration_is_not_swallowed(cache, monkeypatch):
    fake_sweep(monkeypatch, notes=["interrupted during host rounds: the profile holds what was measured before"], partial=True)
    with pytest.raises(KeyboardInterrupt):
        calibrate.ensure_profile(MACHINE_EVENT)
    assert FakeState.restored == 1


def _noisy_calibration(scale: float) -> prof.DeviceProfile:
    """A cached calibration that flagged itself noisy, its eager op ``scale`` times the fake sweep's."""
    import dataclasses

    base = derive_profile(simulate_samples(CALIBRATION_PLAN), H200, quick=True, plan=CALIBRATION_PLAN.name)
    op = base.eager_op_us
    slower = dataclasses.replace(op, median=op.median * scale, low=op.low * scale, high=op.high * scale)
    return dataclasses.replace(base, eager_op_us=slower, noisy=True, noisy_reason="eager_op_us moved 40% between rounds")


@pytest.mark.parametrize(("scale", "kept"), [(1.4, "new"), (0.7, "earlier")])
def test_a_noisy_cached_calibration_is_measured_once_more_and_the_faster_kept(cache, monkeypatch, scale, kept):
    """A machine's first minute is slow and noisy (H200: 9.07 µs per eager op, flagged NOISY,
    against 6.4-6.6 later): the next run measures again, keeps the faster of the two, and
    never measures a third time."""
    earlier = _noisy_calibration(scale)
    prof.save_to_cache(earlier)
    calls = fake_sweep(monkeypatch)
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "measured" and len(calls) == 1, got
    assert f"kept the {kept} one" in got["message"] and FakeState.restored == 1
    cached = prof.load_profile(got["path"], H200).profile
    assert cached.rechecked
    fresh = derive_profile(simulate_samples(CALIBRATION_PLAN), H200, quick=True).eager_op_us.median
    assert cached.eager_op_us.median == pytest.approx(min(fresh, earlier.eager_op_us.median))
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached" and len(calls) == 1


def test_a_quiet_or_full_cached_profile_is_not_measured_again(cache, monkeypatch):
    import dataclasses

    calls = fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    prof.save_to_cache(dataclasses.replace(_noisy_calibration(1.4), noisy=False))
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached"
    prof.save_to_cache(dataclasses.replace(_noisy_calibration(1.4), plan="default", quick=False))  # the user's own sweep
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached" and calls == []


def test_a_failed_recheck_keeps_the_earlier_profile_and_is_not_tried_on_every_run(cache, monkeypatch):
    earlier = _noisy_calibration(1.4)
    prof.save_to_cache(earlier)
    fake_sweep(monkeypatch, error=RuntimeError("CUDA error: out of memory"))
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "failed" and "out of memory" in got["message"]
    cached = prof.load_profile(prof.cache_path(H200), H200).profile
    assert cached.rechecked and cached.eager_op_us.median == pytest.approx(earlier.eager_op_us.median)
    calls = fake_sweep(monkeypatch, error=AssertionError("must not measure again"))
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached" and calls == []
