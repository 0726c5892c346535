"""The worker's trial of a written fix: the patched function captured, replayed on the
recorded calls, compared with the original's eager result and timed (worker/fix_trials.py).
The analysis attaches each trial to the fix it names (hazards/fixes ``with_fixes``)."""

from __future__ import annotations

from dataclasses import dataclass

from launchprof.events.record import Event, omitted


@dataclass(frozen=True, kw_only=True)
class FixTrialEvent(Event):
    """One distinct fix (file, first line, text): tried, or why not (``reason``, a
    model/fix_scope.TrialReason value); ``verified`` None when not tried."""

    TYPE = "fix-trial"
    file: str | None = None
    line: int | None = None
    after: str = ""
    code: str = ""  # the fix's FixCode
    kind: str = ""  # the hazard kind it fixes
    verified: bool | None = None
    captured: bool | None = None
    calls_compared: int = 0
    matches: int = 0
    replay_step_us: float | None = None
    eager_step_us: float | None = None  # the original's eager median on the same calls
    speedup: float | None = None
    reason: str = ""
    function: str | None = omitted()  # the function patched (`model.forward`)
    error: str | None = omitted()  # the capture's or the call's error, short
    trial_us: float | None = omitted()  # the trial's own wall time
