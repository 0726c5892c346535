"""GPU measurements for ``launchprof crossover``: the phases in order, and the sweep that runs them.

Records, never fits: every timing is repeated and kept raw
(:class:`~launchprof.crossover.profile.Series`); :mod:`launchprof.crossover.fit` turns
them into the profile. The measurements live in :mod:`~launchprof.crossover.host` (host
costs, in interleaved rounds) and :mod:`~launchprof.crossover.phases` (device costs).
Ctrl-C ends the sweep and returns what was measured, marked partial.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter

from launchprof.crossover import phases
from launchprof.crossover.gpu import Gpu
from launchprof.crossover.host import host_rounds
from launchprof.crossover.plans import CALIBRATION_PLAN, DEFAULT_PLAN, QUICK_PLAN, SweepPlan, estimate_seconds
from launchprof.crossover.profile import Series
from launchprof.crossover.recorder import NoProgress, ProgressSink, Recorder, guarded

__all__ = [
    "CALIBRATION_PLAN", "DEFAULT_PLAN", "QUICK_PLAN", "NoProgress", "ProgressSink", "SweepPlan", "SweepResult",
    "estimate_seconds", "run_sweep",
]


@dataclass(frozen=True)
class SweepResult:
    samples: tuple[Series, ...]
    notes: tuple[str, ...]
    partial: bool
    elapsed_s: float
    phase_s: tuple[tuple[str, float], ...] = ()  # (phase, seconds) of the phases that ran, in order


Phase = tuple[str, Callable[[SweepPlan], int], Callable[[Gpu, SweepPlan, Recorder], None]]

# Host rounds come right after calibration, before cupy is loaded (the floor phase loads it)
# and long before the profiler pass, so that they see the process a user's script sees.
PHASES: list[Phase] = [
    ("calibrate", lambda p: 1, phases.calibrate),
    ("host rounds", lambda p: p.host_rounds, host_rounds),
    ("floor", lambda p: (2 if p.use_cupy else 1) * len(p.floor_counts), phases.floor),
    ("graph sweep", lambda p: len(p.device_cells()), phases.graph_sweep),
    ("kernel trace", lambda p: 1, phases.traced_kernels),
]


def run_sweep(plan: SweepPlan, progress: ProgressSink | None = None, budget_s: float | None = None) -> SweepResult:
    """Measure everything in ``plan`` on the current CUDA device.

    Ctrl-C stops the sweep and returns what was measured so far with ``partial=True``; so
    does running past ``budget_s`` seconds (checked between phases), with a note.
    Python's garbage collector is paused meanwhile (and restored after): a collection
    inside a timed loop is noise that a median absorbs, but fewer of them is better.
    """
    rec = Recorder(progress=progress or NoProgress())
    for name, total, _ in PHASES:
        rec.progress.phase(name, total(plan))
    started = perf_counter()
    partial = False
    gc_enabled = gc.isenabled()
    gc.disable()
    gpu: Gpu | None = None
    timed: list[tuple[str, float]] = []
    try:
        gpu = Gpu(rec)
        for name, _, measure in PHASES:
            if budget_s is not None and perf_counter() - started > budget_s:
                partial = True
                rec.note(f"stopped before {name}: the sweep ran past its {budget_s:g} s budget")
                break
            rec.current = name
            phase_started = perf_counter()
            guarded(rec, name, lambda m=measure: m(gpu, plan, rec))
            timed.append((name, perf_counter() - phase_started))
            rec.progress.done(name)
    except KeyboardInterrupt:
        partial = True
        rec.note(f"interrupted during {rec.current}: the profile holds what was measured before")
        if gpu is not None:
            try:
                gpu.sync()
            except Exception:
                pass
    finally:
        if gc_enabled:
            gc.enable()
    return SweepResult(
        samples=tuple(rec.samples), notes=tuple(rec.notes), partial=partial, elapsed_s=perf_counter() - started, phase_s=tuple(timed)
    )
