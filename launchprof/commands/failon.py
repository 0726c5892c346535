"""``--fail-on`` for analyze and lint: when does a report fail a CI job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchprof.errors import UsageError

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report

FAIL_ON_CHOICES = ("never", "error", "warning", "no-benefit")


def check_choice(rule: str, allowed: tuple[str, ...] = FAIL_ON_CHOICES) -> str:
    if rule not in allowed:
        raise UsageError(f"unknown --fail-on {rule!r}: choose from {', '.join(allowed)}")
    return rule


def fail_reason(report: Report, rule: str) -> str | None:
    """The one-line reason the rule trips on this report, or None."""
    errors = [h for h in report.hazards if h.severity == "error"]
    warnings = [h for h in report.hazards if h.severity == "warning"]
    if rule == "error" and errors:
        return f"--fail-on error: {len(errors)} error hazard(s), first: {errors[0].kind}"
    if rule == "warning" and (errors or warnings):
        first = (errors or warnings)[0]
        return f"--fail-on warning: {len(errors)} error and {len(warnings)} warning hazard(s), first: {first.kind}"
    if rule == "no-benefit" and report.verdict != "graphs-help":
        return f"--fail-on no-benefit: verdict is {report.verdict}"
    return None
