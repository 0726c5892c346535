"""The typed report: malformed files are one-line usage errors, old versions migrate,
the published JSON Schema is current and accepts what analyse writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")  # a dev dependency; absent on the bare GPU image
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.enums import Severity, Verdict
from launchprof.errors import UsageError
from launchprof.model.core import SCHEMA_VERSION, report_json_schema
from launchprof.model.core import Report
from launchprof.analysis.load import load_report
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


# --- plain dataclasses, validated where a report is read ---------------------------------


def _every_report() -> dict[str, Report]:
    """Built, recorded and re-analysed reports, a multi-GPU one, and lint's."""
    from launchprof.ranks.combine import combine
    from ranks_data import rank_input

    from tests.recorded import run_names

    found = dict(reports.all_reports())
    found |= {f"run:{name}": report_of(name) for name in run_names()}
    found["ranks"] = combine([rank_input(0, "decode_loop"), rank_input(1, "long_kernels")])
    return found


def test_to_dict_writes_what_pydantic_writes_for_every_report():
    """Reports are written without pydantic; the JSON is what pydantic's dump gave."""
    from launchprof.model.records import adapter

    found = _every_report()
    assert {"ranks", "run:bucketed_decode", "lint"} <= set(found)
    for name, report in found.items():
        assert report.to_dict() == adapter(Report).dump_python(report, mode="json"), name
        assert Report.from_dict(json.loads(report.to_json())).to_json() == report.to_json(), name


def test_to_dict_writes_odd_values_in_details_as_pydantic_does():
    """In a field typed Any pydantic writes infinity and NaN as null, tuples and sets as
    lists, paths as strings, enums as their values; a float field keeps infinity."""
    import dataclasses
    import math

    from launchprof.model.records import adapter

    hazard = reports.hazard("hidden-sync", "m", "a.py", 3, details={"t": (1, 2), "s": {3}, "p": Path("/x"), "e": Severity.INFO, "inf": math.inf, "nan": [math.nan], "k": {1: 2}})
    report = dataclasses.replace(reports.graphs_help(), hazards=[hazard], breakeven_replays=math.inf)
    written = report.to_dict()
    assert written == adapter(Report).dump_python(report, mode="json")
    assert written["hazards"][0]["details"] == {"t": [1, 2], "s": [3], "p": "/x", "e": "info", "inf": None, "nan": [None], "k": {"1": 2}}
    assert written["breakeven_replays"] == math.inf


def test_severity_and_verdict_given_as_ids_are_the_enums():
    """The hazard rules pass a kind's severity as a string; renderers compare with ``is``."""
    import dataclasses

    hazard = reports.hazard("hidden-sync", "m", "a.py", 3, severity="warning")
    assert hazard.severity is Severity.WARNING
    report = dataclasses.replace(reports.graphs_help(), verdict="marginal")
    assert report.verdict is Verdict.MARGINAL


def test_unknown_keys_are_ignored_at_every_level():
    """A report from a newer launchprof (fields added) loads; fingerprints are derived on load."""
    data = json.loads(reports.graphs_help().to_json())
    bucketed = json.loads(report_of("bucketed_decode").to_json())
    data["buckets"] = bucketed["buckets"]
    for part in (data, data["machine"], data["hazards"][0], data["eager"], data["eager"]["step_us"], data["buckets"], data["buckets"]["measured"][0]):
        part["added_later"] = {"x": 1}
    del data["hazards"][0]["fingerprint"]
    report = Report.from_dict(data)
    assert report.buckets is not None and report.buckets.measured[0].size == bucketed["buckets"]["measured"][0]["size"]
    assert len(report.hazards[0].fingerprint) == 16
    assert "added_later" not in report.to_json()


def test_the_models_import_without_pydantic():
    code = "import sys, launchprof.model.core; print(sorted(m for m in sys.modules if m.startswith('pydantic')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SCHEMA_DOC.parent.parent)})
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_models_behave_as_frozen_dataclasses():
    """The shared methods of launchprof.model.records stand in for the generated ones."""
    import dataclasses

    from launchprof.model.step_timing import Stats

    stats = Stats(median=1.0, p10=0.5, p90=2.0, n=3)
    assert repr(stats) == "Stats(median=1.0, p10=0.5, p90=2.0, n=3)"
    assert stats == Stats(1.0, 0.5, 2.0, 3) and hash(stats) == hash(Stats(1.0, 0.5, 2.0, 3))
    assert stats != dataclasses.replace(stats, n=4) and stats != (1.0, 0.5, 2.0, 3)
    for change in (lambda: setattr(stats, "n", 4), lambda: setattr(stats, "other", 1), lambda: delattr(stats, "n")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            change()
    report = reports.graphs_help()
    assert repr(report).startswith("Report(schema_version=3, ") and report == Report.from_dict(report.to_dict())
