"""Runs of benchmarks/fix-field recorded on an H200 (2026-12-02, scripts/fix-field) with the
worker's fix trials: what the report shows of a fix launchprof tried on the user's calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchprof.analysis.build_report import analyse
from launchprof.render.console import headline
from launchprof.render import renderer_for
from launchprof.render.renderer import RenderOptions
from launchprof.run.file import load_run

RUNS = Path(__file__).parent / "data" / "fix_runs"


def _report(name: str):
    return analyse(load_run(RUNS / f"{name}.lprun"))


def _text(report, explain: bool = False) -> str:
    return renderer_for("text", RenderOptions(width=80, explain=explain)).render(report)


@pytest.mark.parametrize("name, after", [
    ("peak_item", "return x / peak.clamp_min(1e-06)"),
    ("branch_where", "return torch.where(h.mean() > 0, h * 2.0, h - 1.0)"),
    ("unjoined_fork", "torch.cuda.current_stream().wait_stream(side)"),
])  # fmt: skip
def test_the_written_fix_was_tried_and_verified_on_the_users_calls(name, after):
    report = _report(name)
    fixed = [h.fix for h in report.hazards if h.fix is not None and h.fix.verified]
    assert fixed and any(after in f.after for f in fixed)
    v = fixed[0].verification
    assert v.captured and v.calls_compared >= 3 and v.matches == v.calls_compared and v.speedup > 1.0
    assert "verified: captures, matches eager on" in _text(report)


def test_a_not_capturable_headline_gives_the_verified_fixs_measured_speedup():
    report = _report("peak_item")
    assert report.verdict == "not-capturable"
    [fix] = [h.fix for h in report.hazards if h.fix is not None and h.fix.verified]
    line = " ".join(headline(report).plain.split())
    assert f"with the verified fix at peak_item.py:{fix.line} alone: captures, matches eager" in line
    assert f"{fix.verification.speedup:.2f}× measured on your calls" in line


def test_a_frozen_counter_reads_replay_invalid_not_not_capturable():
    report = _report("frozen_counter")
    assert report.verdict == "replay-invalid" and report.validation.matches < report.validation.calls_compared
    assert "speedup once fixed" in headline(report).plain


def test_a_partial_capture_with_no_module_to_graph_shows_only_with_explain():
    report = _report("peak_item")
    assert report.partial_capture is not None and not report.partial_capture.candidates
    assert "Partial capture" not in _text(report)
    assert "Partial capture" in _text(report, explain=True)


def test_a_mismatch_names_its_cause_even_when_the_cause_has_no_written_fix():
    report = _report("frozen_counter")
    [mismatch] = [h for h in report.hazards if h.kind == "replay-mismatch"]
    [counter] = [h for h in report.hazards if h.kind == "host-side-effect"]
    assert not counter.fix.after  # `self.t += 1`: no writer moves an attribute counter
    assert mismatch.fix.params["kinds"] == ["host-side-effect"] and mismatch.fix.params["lines"] == [counter.line]
    assert f"(host-side-effect at line {counter.line}): change that state as its rule below says" in " ".join(mismatch.fix.note.split())
