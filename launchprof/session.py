"""The report models, re-exported under their old home, and ``load_report``.

Renderers import from here; the models themselves live in :mod:`launchprof.models`.
"""

from __future__ import annotations

from pathlib import Path

from launchprof.enums import Severity, Verdict
from launchprof.errors import UsageError
from launchprof.input_files import REPORT, WANTED_SAVED, check_input_file, refuse_other_kind
from launchprof.jsonfile import read_json_object
from launchprof.models import (
    SCHEMA_VERSION,
    BucketPlan,
    EagerProfile,
    Hazard,
    KernelSpan,
    Machine,
    Prediction,
    ReplayProfile,
    Report,
    RunInfo,
    Speedup,
    Stats,
    Timeline,
    Validation,
)

VERDICTS = tuple(v.value for v in Verdict if v is not Verdict.STATIC_ONLY)
# `lint` writes the same report shape with mode "lint" and this verdict: nothing was measured.
STATIC_VERDICT = Verdict.STATIC_ONLY.value
SEVERITIES = tuple(s.value for s in Severity)

__all__ = [
    "SCHEMA_VERSION", "SEVERITIES", "STATIC_VERDICT", "VERDICTS", "BucketPlan", "EagerProfile", "Hazard",
    "KernelSpan", "Machine", "Prediction", "ReplayProfile", "Report", "RunInfo", "Speedup", "Stats",
    "Timeline", "Validation", "load_report",
]


def load_report(path: str | Path) -> Report:
    """Read a JSON report; a missing, truncated, foreign or malformed file is a UsageError."""
    p = Path(path)
    check_input_file(p, "a JSON report", f"report file not found: {p}")
    data = read_json_object(p, "a launchprof report")
    refuse_other_kind(p, data, REPORT, WANTED_SAVED)
    try:
        return Report.from_dict(data)
    except UsageError as exc:
        raise UsageError(f"{p}: {exc}") from None
