"""Hazard rules on events recorded on an H200: each sample model's `# expect:` markers are
found at exactly their line, and the clean models report no warning or error."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchprof.analysis import build_report
from tests.recorded import SAMPLES, expected_markers, load_evidence, run_names

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
WORKER = {"returncode": 0, "timed_out": False, "interrupted": False, "wall_s": 1.0}


def report_for(name: str, tmp: Path):
    return build_report(load_evidence(name, tmp), f"sample_models/{name}.py", "step", WORKER, 25)


def found(report) -> set[tuple[str, str, int]]:
    return {(h.kind, Path(h.file).name, h.line) for h in report.hazards if h.severity in ("error", "warning") and h.file}


@pytest.mark.parametrize("name", [n for n in HAZARDOUS if n in run_names()])
def test_markers_found_at_their_lines(name, tmp_path):
    expected = expected_markers(SAMPLES / f"{name}.py")
    if name == "hidden_sync":
        expected |= expected_markers(SAMPLES / "_helpers.py")
    report = report_for(name, tmp_path)
    got = found(report)
    assert expected <= got, f"missing: {expected - got}"
    extra = {g for g in got if g[0] not in ("replay-mismatch",)} - expected
    assert not extra, f"unexpected findings: {extra}"


@pytest.mark.parametrize("name", [n for n in CLEAN if n in run_names()])
def test_clean_models_have_no_warnings(name, tmp_path):
    report = report_for(name, tmp_path)
    assert found(report) == set()
    assert report.validation is not None and report.validation.matches == report.validation.calls_compared


@pytest.mark.parametrize("name", [n for n in HAZARDOUS if n in run_names()])
def test_every_finding_is_in_user_code_with_a_hint(name, tmp_path):
    for h in report_for(name, tmp_path).hazards:
        assert h.file is None or "site-packages" not in h.file and "/launchprof/" not in h.file
        assert h.hint and h.message


def test_frozen_scalar_names_the_argument_and_is_an_error(tmp_path):
    if "frozen_scalar" not in run_names():
        pytest.skip("not recorded")
    report = report_for("frozen_scalar", tmp_path)
    frozen = [h for h in report.hazards if h.kind == "frozen-scalar"]
    assert len(frozen) == 1 and frozen[0].severity == "error" and "`lr`" in frozen[0].message
    assert report.verdict == "not-capturable"


def test_not_capturable_when_capture_fails(tmp_path):
    for name in ("hidden_sync", "unjoined_stream", "pageable_copy"):
        if name in run_names():
            assert report_for(name, tmp_path).verdict == "not-capturable"
