"""The Python API: ``analyze`` and ``check`` on a live function, in the caller's process.

The measurement plan, the analysis and the report models are the CLI's own; only the
process boundary differs (see :mod:`launchprof.api.inprocess`). A sticky CUDA error inside
the measured function (a device-side assert, an illegal memory access) ends the caller's
process: run untrusted steps through ``launchprof analyze`` instead, where only the worker dies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchprof.api.inprocess import Call, PlanSettings, measure, observed_calls
from launchprof.api.safety import CaptureHazardError, blocking_hazards, format_hazards, is_capture_safe
from launchprof.model.core import Report

if TYPE_CHECKING:
    from launchprof.crossover.profile import DeviceProfile

# check() needs the hazard evidence, not tight timings: fewer timed calls and bursts, no
# device-profile calibration; warm-up, profiled calls and validations stay as in analyze,
# so every hazard rule sees the same evidence. A gate must see stream races, so check()
# runs the sanitizer pass analyze() leaves out by default (it slows the rest of the process).
CHECK_SETTINGS = PlanSettings(repeat=5, calibrate=False, stream_check=True)


def analyze(
    fn: Callable[..., Any],
    *args: Any,
    calls: Sequence[Call] | None = None,
    calibrate: bool = True,
    repeat: int = 50,
    run_out: str | Path | None = None,
    profile: DeviceProfile | None = None,
    stream_check: bool = False,
    **kwargs: Any,
) -> Report:
    """Measure ``fn(*args, **kwargs)`` eagerly and as a CUDA graph replay; return the Report.

    ``calls``: (args, kwargs) pairs used as the observed calls, in order and cycled (default:
    the given arguments for every call); varying scalars or shapes there are what the
    frozen-scalar and dynamic-shape rules look at. ``calibrate=False`` skips measuring a quick
    device profile when none is cached (then there is no prediction). ``repeat`` is the timed
    calls of each kind. ``run_out`` keeps the run file (``.lprun``) for ``launchprof report``.
    ``profile``: a device profile (``launchprof.crossover.profile``) instead of the cached one.
    ``stream_check=True`` adds the stream-race check (one call under PyTorch's CUDA sanitizer);
    it is off by default because the sanitizer's hooks stay on and slow every later CUDA op
    of this process, so a later timing here would read high. ``check`` always runs it.
    Options named like these cannot be passed to ``fn`` as keywords: use ``calls`` for them.

    Raises EnvironmentProblem without a CUDA device, ScriptFailed (``.report`` holds what
    was measured, ``__cause__`` the original) when ``fn`` raises. A sticky CUDA error in ``fn``
    ends this process.
    """
    settings = PlanSettings(repeat=repeat, calibrate=calibrate, stream_check=stream_check)
    return measure(fn, observed_calls(args, kwargs, calls), settings, run_out, profile)


def quick_report(fn: Callable[..., Any], *args: Any, calls: Sequence[Call] | None = None, **kwargs: Any) -> Report:
    """The report ``check`` judges: the same rules, a shorter plan (CHECK_SETTINGS)."""
    return measure(fn, observed_calls(args, kwargs, calls), CHECK_SETTINGS)


def check(fn: Callable[..., Any], *args: Any, calls: Sequence[Call] | None = None, **kwargs: Any) -> Report:
    """Raise CaptureHazardError, listing each hazard (kind, file:line, fix), unless ``fn`` is
    capture-safe: no error or warning hazard and a verdict other than not-capturable or
    replay-invalid.
    Returns the report when it is safe. It includes the stream-race check, whose sanitizer
    hooks stay on in this process: CUDA ops timed here afterwards read high."""
    report = quick_report(fn, *args, calls=calls, **kwargs)
    if not is_capture_safe(report):
        raise CaptureHazardError(report)
    return report


__all__ = ["CaptureHazardError", "analyze", "blocking_hazards", "check", "format_hazards", "is_capture_safe", "quick_report"]
