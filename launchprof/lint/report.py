"""lint's report as plain frozen dataclasses: the fields of :mod:`launchprof.models`'
``Report``, ``Hazard`` and ``Machine``, in the same order, without pydantic.

Why: lint builds its report from its own findings, so there is nothing to validate, and
importing pydantic and building the report models was the largest single cost of a
``launchprof lint --all`` run (about 0.2 s of CPU on the development machine, more than a
third of the parent process's time). The text and JSON renderers only read attributes,
so they take this report as they take the model; every other format gets the validated
model from :meth:`LintReport.to_model`. ``tests/test_lint_report.py`` checks that the
fields, their order and their defaults match the models and that both write the same
JSON, byte for byte: a field added to the models fails it until it is added here too.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from launchprof.enums import Severity, Verdict
from launchprof.findings import Note
from launchprof.hazards.identity import fingerprint_of

if TYPE_CHECKING:
    from launchprof.session import Report

SCHEMA_VERSION = 3  # launchprof.models.SCHEMA_VERSION: the test checks that they agree


@dataclass(frozen=True)
class LintMachine:
    """``Machine`` for a static check: only the Python version is known."""

    gpu: str | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    python: str = ""
    cpu_model: str | None = None
    cpu_cores: int | None = None
    load_avg: float | None = None
    gpu_memory_bytes: int | None = None
    gpu_clocks_mhz: dict[str, float] | None = None
    gpu_other_processes: bool | None = None


@dataclass(frozen=True)
class LintHazard:
    """``Hazard`` as lint finds it: no fix is written, the code of the line is in ``details``."""

    kind: str
    severity: Severity
    message: str
    file: str | None
    line: int | None
    hint: str
    source: str = "runtime"
    details: dict[str, Any] = field(default_factory=dict)
    fix: None = None
    fingerprint: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "fingerprint", fingerprint_of(self))  # the model's rule


@dataclass(frozen=True)
class LintReport:
    """``Report`` with ``mode="lint"``: nothing measured, so every measured field stays None."""

    schema_version: int
    launchprof_version: str
    created: str
    machine: LintMachine
    script: str
    target: str | None
    verdict: Verdict
    eager: None = None
    replay: None = None
    speedup: None = None
    breakeven_replays: None = None
    predicted_speedup: None = None
    validation: None = None
    hazards: list[LintHazard] = field(default_factory=list)
    buckets: None = None
    run: None = None
    notes: list[str] = field(default_factory=list)
    findings: list[Note] = field(default_factory=list)
    mode: str = "analyze"
    timeline: None = None
    prediction: None = None
    project_root: str | None = None
    run_file: str | None = None
    outputs: None = None
    capture_snippet: str | None = None
    candidates: list[Any] = field(default_factory=list)
    ranks: None = None
    rank_skew: None = None
    compile: None = None
    compile_no_cudagraphs: None = None

    def to_dict(self) -> dict[str, Any]:
        """What ``Report.to_dict`` gives: JSON types, fields in declaration order."""
        return _plain(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, ensure_ascii=False)

    def to_model(self) -> Report:
        """The validated report model, for the renderers that need more than attributes."""
        from launchprof.models import validate_report

        return validate_report(self.to_dict())


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
