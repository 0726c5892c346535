"""The verdict, from measurements only (README "Verdicts")."""

from __future__ import annotations

from launchprof.models import Speedup, Validation

HELP_THRESHOLD = 1.1


def decide(
    has_target: bool,
    captured: bool | None,
    validation: Validation | None,
    speedup: Speedup | None,
) -> str:
    """``captured`` is None when the run never reached capture."""
    if not has_target or captured is None:
        return "eager-only"
    if captured is False:
        return "not-capturable"
    if validation is not None and validation.matches < validation.calls_compared:
        return "not-capturable"
    if speedup is None:
        return "eager-only"
    if speedup.low > HELP_THRESHOLD:
        return "graphs-help"
    if speedup.median > 1.0 and speedup.high >= 1.0:
        return "marginal"
    return "graphs-dont-help"
