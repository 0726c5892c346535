"""The typed report: malformed files are one-line usage errors, old versions migrate,
the published JSON Schema is current and accepts what analyse writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")  # a dev dependency; absent on the bare GPU image
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.enums import Severity, Verdict
from launchprof.errors import UsageError
from launchprof.models import SCHEMA_VERSION, report_json_schema
from launchprof.session import Report, load_report
from tests.recorded import DATA, report_of

SCHEMA_DOC = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"


def _dict() -> dict:
    return reports.graphs_help().to_dict()


def test_round_trip_keeps_every_field():
    report = reports.graphs_help()
    again = Report.from_dict(json.loads(report.to_json()))
    assert again == report
    assert isinstance(again.verdict, Verdict) and isinstance(again.hazards[0].severity, Severity)


@pytest.mark.parametrize(
    "breaks, where",
    [
        (lambda d: d["hazards"].__setitem__(0, "ten"), "hazards.0"),
        (lambda d: d["hazards"][0].__setitem__("severity", "fatal"), "severity"),
        (lambda d: d.__setitem__("verdict", "graphs-great"), "verdict"),
        (lambda d: d["eager"]["step_us"].__setitem__("median", "fast"), "eager.step_us.median"),
        (lambda d: d.pop("machine"), "machine"),
    ],
)
def test_malformed_report_is_a_usage_error_naming_the_field(breaks, where):
    data = _dict()
    breaks(data)
    with pytest.raises(UsageError, match=where.replace(".", r"\.")) as err:
        Report.from_dict(data)
    assert "\n" not in str(err.value)


def test_malformed_report_file_is_exit_2_with_one_line(tmp_path):
    data = _dict()
    data["hazards"][0] = "ten"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["report", str(path), "-f", "json"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "hazards.0" in lines[0] and "Traceback" not in result.output


def test_version_1_report_migrates():
    """A report written before version 2 (recorded on the H200) loads, with its prediction
    structured and its speedup saying how it was computed."""
    old = json.loads((DATA / "migrations" / "report-v1.json").read_text())
    assert old["schema_version"] == 1
    report = load_report(DATA / "migrations" / "report-v1.json")
    assert report.schema_version == SCHEMA_VERSION == 3
    assert report.speedup is not None and "ratio of medians" in report.speedup.method
    assert report.eager.timing == "in-loop"
    if old.get("predicted_speedup") is not None:
        assert report.prediction is not None and report.prediction.median == old["predicted_speedup"]
    assert all(len(h.fingerprint) == 16 for h in report.hazards)


def test_newer_report_asks_to_upgrade():
    data = _dict() | {"schema_version": SCHEMA_VERSION + 1}
    with pytest.raises(UsageError, match="upgrade launchprof"):
        Report.from_dict(data)


def test_fingerprint_ignores_the_line_but_not_the_code():
    import dataclasses

    h = reports.graphs_help().hazards[0]
    moved = dataclasses.replace(h, line=(h.line or 0) + 7)
    assert moved.fingerprint == h.fingerprint
    other = dataclasses.replace(h, details={**h.details, "code": "something_else()"})
    assert other.fingerprint != h.fingerprint


def test_published_schema_is_current():
    """docs/report.schema.json is generated from the models; regenerate it with
    LAUNCHPROF_WRITE_SCHEMA=1 when the models change."""
    text = json.dumps(report_json_schema(), indent=2, sort_keys=True) + "\n"
    if os.environ.get("LAUNCHPROF_WRITE_SCHEMA"):
        SCHEMA_DOC.write_text(text, encoding="utf-8")
    assert SCHEMA_DOC.read_text(encoding="utf-8") == text, "docs/report.schema.json is stale"


@pytest.mark.parametrize("name", ["decode_loop", "frozen_scalar", "hidden_sync"])
def test_analysed_reports_validate_against_the_schema(name):
    jsonschema.validate(report_of(name).to_dict(), report_json_schema())
