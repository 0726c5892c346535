"""Hazard rules on runs recorded on an H200: each sample model's `# expect:` markers are
found at exactly their line, and the clean models report no warning or error."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from launchprof.analysis import analyse
from tests.recorded import SAMPLES, expected_markers, load, recorded, report_of

CLEAN = ["decode_loop", "long_kernels", "two_streams_ok", "dropout_train", "dict_inputs"]
HAZARDOUS = [
    "hidden_sync",
    "unjoined_stream",
    "pageable_copy",
    "frozen_scalar",
    "reallocated_global",
    "dynamic_shapes",
    "data_dependent",
    "numpy_rng",
    "side_effects",
]


def found(report) -> set[tuple[str, str, int]]:
    return {(h.kind, Path(h.file).name, h.line) for h in report.hazards if h.severity in ("error", "warning") and h.file}


@pytest.mark.parametrize("name", recorded(HAZARDOUS))
def test_markers_found_at_their_lines(name):
    expected = expected_markers(SAMPLES / f"{name}.py")
    if name == "hidden_sync":
        expected |= expected_markers(SAMPLES / "_helpers.py")
    report = report_of(name)
    got = found(report)
    assert expected <= got, f"missing: {expected - got}"
    extra = {g for g in got if g[0] not in ("replay-mismatch",)} - expected
    assert not extra, f"unexpected findings: {extra}"


@pytest.mark.parametrize("name", recorded(CLEAN))
def test_clean_models_have_no_warnings(name):
    report = report_of(name)
    assert found(report) == set()
    assert report.validation is not None and report.validation.matches == report.validation.calls_compared


@pytest.mark.parametrize("name", recorded(HAZARDOUS))
def test_findings_are_relative_to_the_project_root_with_a_fingerprint(name):
    """The recorded events hold absolute paths of the recording machine; the report holds
    paths relative to the project root, and every hazard carries its identity."""
    report = report_of(name)
    assert report.project_root == "/work/main"
    for h in report.hazards:
        assert h.file is None or h.file.startswith("sample_models/"), h.file
        assert h.hint and h.message
        assert len(h.fingerprint) == 16


def test_sources_come_from_the_run_file():
    """The hazard's code comes from the sources stored in the run, not from this checkout."""
    run = load("frozen_scalar")
    assert "sample_models/frozen_scalar.py" in run.sources
    edited = dict(run.sources)
    edited["sample_models/frozen_scalar.py"] = "\n" * 200  # the stored copy is all the analysis reads
    plain = analyse(run)
    blank = analyse(dataclasses.replace(run, sources=edited))
    code = {h.kind: h.details.get("code") for h in plain.hazards if h.kind == "frozen-scalar"}
    code_blank = {h.kind: h.details.get("code") for h in blank.hazards if h.kind == "frozen-scalar"}
    assert code["frozen-scalar"] and code["frozen-scalar"] != code_blank.get("frozen-scalar")


def test_frozen_scalar_names_the_argument_and_is_an_error():
    report = report_of("frozen_scalar")
    frozen = [h for h in report.hazards if h.kind == "frozen-scalar"]
    assert len(frozen) == 1 and frozen[0].severity == "error" and "`lr`" in frozen[0].message
    assert report.verdict == "replay-invalid"  # it captures; the replay keeps the captured lr


@pytest.mark.parametrize("name", recorded(["hidden_sync", "unjoined_stream", "pageable_copy"]))
def test_not_capturable_when_capture_fails(name):
    assert report_of(name).verdict == "not-capturable"
