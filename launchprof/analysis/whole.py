"""Whole-script mode (analyze with no target): what the report may and may not claim.

Nothing is captured in this mode, so a sync site is not an error: it would break capture
only if it ran inside a target. Such findings become ``info`` (``--fail-on error`` stays
quiet), and the report lists candidate targets from the worker's ``candidates`` event,
each with the command that analyses it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from launchprof.enums import Severity
from launchprof.run.evidence import Evidence
from launchprof.model.hazard_codes import Placed
from launchprof.hazards.common import restated
from launchprof.model.records import adapter
from launchprof.model.core import Candidate, Report
from launchprof.model.hazard_records import Hazard
from launchprof.common.project import relative_to_root

def as_info(hazard: Hazard) -> Hazard:
    if hazard.severity is Severity.INFO:
        return hazard
    details = {**hazard.details, "whole_script_severity": str(hazard.severity)}
    return dataclasses.replace(restated(hazard, {Placed.WHOLE_SCRIPT: True}), severity=Severity.INFO, details=details)


def candidates_of(ev: Evidence, root: str | None) -> list[Candidate]:
    out = []
    for row in ev.candidates:
        try:
            file = row.file
            if file and root:
                file = relative_to_root(file, Path(root))
            out.append(adapter(Candidate).validate_python({**dataclasses.asdict(row), "file": file}))
        except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
            continue  # a malformed row is dropped, never the report
    return out


def whole_script(report: Report, ev: Evidence, root: str | None) -> Report:
    """The report as whole-script mode may state it; other reports are returned unchanged."""
    if report.mode != "analyze" or report.target is not None:
        return report
    return dataclasses.replace(report, hazards=[as_info(h) for h in report.hazards], candidates=candidates_of(ev, root))
