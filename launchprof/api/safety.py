"""``launchprof.check``: is a function capture-safe? One rule, shared by the pytest plugin.

A function is not capture-safe when the report's verdict is ``not-capturable`` or
``replay-invalid`` (it captures, but its replay differs from eager), or when any
hazard is an error or a warning: the same hazard rules as ``analyze``, so ``check``
and ``launchprof analyze --fail-on warning`` agree on the same code.
"""

from __future__ import annotations

from collections.abc import Iterable

from launchprof.enums import Severity, Verdict, hazard_order
from launchprof.errors import FailOnTriggered
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report

def blocking_hazards(report: Report) -> list[Hazard]:
    """The hazards that make a function unsafe to capture, errors first."""
    found = [h for h in report.hazards if Severity(h.severity).blocks]
    return sorted(found, key=hazard_order)


def is_capture_safe(report: Report) -> bool:
    unsafe = (Verdict.NOT_CAPTURABLE, Verdict.REPLAY_INVALID)
    return Verdict(report.verdict) not in unsafe and not blocking_hazards(report)


def hazard_line(h: Hazard) -> str:
    """``kind (severity) at file:line: message; fix: hint`` on one line."""
    where = f"{h.file}:{h.line}" if h.file and h.line else (h.file or "unknown location")
    return f"{h.kind} ({Severity(h.severity).value}) at {where}: {h.message}; fix: {h.hint}"


def format_hazards(hazards: Iterable[Hazard]) -> str:
    """The hazards as an indented list, one per line (``  - ...``)."""
    return "\n".join(f"  - {hazard_line(h)}" for h in hazards)


def unsafe_summary(report: Report) -> str:
    """Why the function is not capture-safe, with every blocking hazard listed."""
    hazards = blocking_hazards(report)
    target = report.target or "the function"
    head = f"{target} is not capture-safe (verdict {Verdict(report.verdict).value}"
    head += f", {len(hazards)} hazard{'s' if len(hazards) != 1 else ''}):" if hazards else "):"
    body = format_hazards(hazards)
    if not hazards and report.run is not None and report.run.cause:
        body = f"  - {report.run.cause}"
    return f"{head}\n{body}" if body else head


class CaptureHazardError(FailOnTriggered):
    """The function cannot be captured safely as it is written.

    ``str(error)`` lists every hazard (kind, file:line, fix); ``.report`` is the full report
    and ``.hazards`` the blocking hazards. Carries exit code 1, like ``--fail-on``."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.hazards = blocking_hazards(report)
        super().__init__(unsafe_summary(report))
