"""A device profile for a fresh machine, measured inside ``analyze``'s worker before the script runs.

A new user has no cached profile, so without this every report's prediction was empty: the
"fix these hazards and expect about X" promise never showed. The worker calls
:func:`ensure_profile` once CUDA is up and before the user's script: a cached profile for
this GPU/driver/torch is used as is; otherwise the reduced
:data:`~launchprof.crossover.plans.CALIBRATION_PLAN` is measured (well under 10 s on an
H200), fitted and cached for later runs. A cached calibration that flagged itself noisy is
measured once more by the next run, which keeps the faster of the two (:func:`recheck`).
Whether the cached profile will do is read from its JSON (``cache_files``), without pydantic
and the profile models: that answer is paid before every script, and is nearly always yes.

It must leave the user's run as it found it: no cupy import and no profiler pass (the plan
skips both), the garbage collector's state restored (``run_sweep`` does that), the CPU and
CUDA random number generators restored (graph capture registers the default generator),
and everything it allocated freed (``synchronize`` + ``empty_cache``). It never raises an
Exception: any failure is ``status: "failed"`` with one line, and the worker goes on to the
script; only Ctrl-C (KeyboardInterrupt) propagates, because the user asked to stop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import platform
from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any

from launchprof.errors import UsageError

if TYPE_CHECKING:  # the worker imports this module: the models load when a profile is read
    from pathlib import Path

    from launchprof.crossover.cache_files import CachedEntry
    from launchprof.crossover.profile import DeviceProfile
    from launchprof.model.core import Machine

CALIBRATION = "calibration"  # CALIBRATION_PLAN's name, as profiles record it
BUDGET_S = 8.0  # the sweep stops between phases past this; start-up and the fit fit in the rest of 10 s

Progress = Callable[[str, float], None]


class _FractionProgress:
    """Adapts the sweep's per-phase progress to one ``progress(label, fraction)`` callback."""

    def __init__(self, callback: Progress | None) -> None:
        self._callback = callback
        self._totals: dict[str, int] = {}
        self._done: dict[str, int] = {}

    def _report(self, name: str) -> None:
        if self._callback is None:
            return
        total = sum(self._totals.values()) or 1
        try:
            self._callback(f"calibrating this GPU: {name}", min(sum(self._done.values()) / total, 1.0))
        except Exception:  # a broken progress bar must not cost the calibration
            self._callback = None

    def phase(self, name: str, total: int) -> None:
        self._totals[name] = max(total, 1)
        self._done[name] = 0

    def advance(self, name: str, steps: int = 1) -> None:
        if name in self._done:
            self._done[name] = min(self._done[name] + steps, self._totals[name])
            self._report(name)

    def done(self, name: str) -> None:
        if name in self._done:
            self._done[name] = self._totals[name]
            self._report(name)


def machine_from_dict(machine: dict[str, Any]) -> Machine:
    """The profile's Machine from the worker's machine event (extra keys such as cpu_model dropped)."""
    from launchprof.model.records import adapter
    from launchprof.model.core import Machine

    names = {f.name for f in dataclasses.fields(Machine)}
    fields = {name: machine.get(name) for name in names}
    # A sparse event still names this interpreter: calibration runs in the worker's own Python.
    fields["python"] = fields.get("python") or platform.python_version()
    return adapter(Machine).validate_python(fields)  # the worker's event, checked as a report's machine is


def _result(status: str, path: Any, started: float, message: str) -> dict[str, Any]:
    return {"status": status, "path": None if path is None else str(path), "seconds": round(perf_counter() - started, 3), "message": message}


def cached_entry(machine: dict[str, Any]) -> CachedEntry | None:
    """The cache file for exactly this GPU/driver/torch when it looks like a usable profile,
    else None (measure again). Read without the profile models: this runs before every
    script, and a cached profile is the common case."""
    from launchprof.crossover.cache_files import event_cache_path, read_cached

    path = event_cache_path(machine)
    return read_cached(path) if path is not None else None


def needs_recheck(entry: CachedEntry) -> bool:
    """A calibration that flagged itself noisy and was not measured a second time yet. The
    calibration of a freshly started machine's first analyze read 9.07 µs per eager op,
    flagged NOISY, against 6.4-6.6 µs in later sweeps on the same machine: kept for good,
    it would make every later prediction count launches about 1.4x too dear."""
    return entry.plan == CALIBRATION and entry.noisy and not entry.rechecked


def load_cached(path: Path) -> DeviceProfile | None:
    """The cached profile, fully validated; None when it does not load (measure from scratch)."""
    from launchprof.crossover.profile import load_profile

    try:
        return load_profile(path).profile
    except UsageError:
        return None


def _eager_op(profile: DeviceProfile) -> float:
    value = getattr(profile.eager_op_us, "median", None)
    return float(value) if value is not None else float("inf")


def recheck(earlier: DeviceProfile, machine: Machine, progress: Progress | None) -> tuple[DeviceProfile, Path, str]:
    """Measure once more, keep the faster of the two (noise only ever adds time, as timeit
    keeps the fastest run), mark it rechecked so that it is not measured a third time."""
    from launchprof.crossover.profile import save_to_cache

    try:
        again, _ = measure_and_cache(machine, progress)
    except Exception:  # kept as it was, and not tried again on every later run
        with contextlib.suppress(OSError):
            save_to_cache(dataclasses.replace(earlier, rechecked=True))
        raise
    newer = _eager_op(again) <= _eager_op(earlier)
    kept = dataclasses.replace(again if newer else earlier, rechecked=True)
    why = (
        f"the cached calibration was noisy, so it was measured again: kept the {'new' if newer else 'earlier'} one "
        f"({_eager_op(again):.2f} µs per eager op now, {_eager_op(earlier):.2f} before)"
    )
    return kept, save_to_cache(kept), why


def measure_and_cache(machine: Machine, progress: Progress | None) -> tuple[DeviceProfile, Path]:
    """Run the calibration sweep, fit it and cache it: (profile, path)."""
    from launchprof.crossover.fit import derive_profile
    from launchprof.crossover.plans import CALIBRATION_PLAN
    from launchprof.crossover.profile import save_to_cache
    from launchprof.crossover.sweep import run_sweep

    result = run_sweep(CALIBRATION_PLAN, _FractionProgress(progress), budget_s=BUDGET_S)
    if result.partial and any(n.startswith("interrupted") for n in result.notes):
        raise KeyboardInterrupt
    notes = [*result.notes, "measured by analyze's calibration (a reduced plan); `launchprof crossover` measures the full profile"]
    profile = derive_profile(result.samples, machine, partial=result.partial, quick=True, notes=notes, plan=CALIBRATION_PLAN.name)
    if profile.graph_launch_fixed_us is None or (profile.graph_node_us is None and profile.floor_node_us is None):
        raise RuntimeError("the calibration measured no graph replay coefficients: " + "; ".join(result.notes[:2]))
    return profile, save_to_cache(profile)


class _UserState:
    """The random number generators' state and the GC flag, saved before and restored after."""

    def __init__(self) -> None:
        import torch

        self.gc_enabled = gc.isenabled()
        self.cpu_rng = torch.get_rng_state()
        self.cuda_rng = torch.cuda.get_rng_state_all()

    def restore(self) -> None:
        import torch

        torch.cuda.synchronize()
        gc.collect()  # the sweep's graphs (they unregister from the generator) and tensors, before empty_cache
        torch.cuda.empty_cache()
        torch.set_rng_state(self.cpu_rng)
        torch.cuda.set_rng_state_all(self.cuda_rng)
        if self.gc_enabled:
            gc.enable()
        else:
            gc.disable()


def ensure_profile(machine: dict[str, Any], progress: Progress | None = None) -> dict[str, Any]:
    """A device profile for this GPU/driver/torch: the cached one, or a quick one measured now.

    Returns ``{"status": "cached" | "measured" | "failed", "path", "seconds", "message"}``;
    the worker puts it in its ``calibration`` event. Never raises an Exception.
    """
    started = perf_counter()
    state: _UserState | None = None
    try:
        entry = cached_entry(machine)
        if entry is not None and not needs_recheck(entry):
            return _result("cached", entry.path, started, f"device profile cached at {entry.path}")
        m = machine_from_dict(machine)
        earlier = load_cached(entry.path) if entry is not None else None
        state = _UserState()
        if earlier is not None:
            profile, path, why = recheck(earlier, m, progress)
            return _result("measured", path, started, f"{why}; cached at {path}")
        profile, path = measure_and_cache(m, progress)
        noisy = f" (noisy: {profile.noisy_reason}; measured again on the next run)" if profile.noisy else ""
        seconds = perf_counter() - started
        return _result("measured", path, started, f"measured a quick device profile for {m.gpu} in {seconds:.1f} s, cached at {path}{noisy}")
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        return _result("failed", None, started, f"calibration failed: {type(exc).__name__}: {first}".rstrip(": "))
    finally:
        if state is not None:
            try:
                state.restore()
            except Exception:
                pass  # the device is gone: the script will say so itself
