"""Notes are records (launchprof.model.findings) and render/notes_text writes their sentences."""

from __future__ import annotations

import dataclasses
import json

import pytest

from launchprof.model.findings import Note, NoteCode, note, text_note
from launchprof.model.core import Report
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.words.notes_text import SENTENCES, note_text, report_notes
from tests.recorded import report_of


def _rendered(report: Report, fmt_name: str) -> str:
    return " ".join(renderer_for(fmt_name, RenderOptions()).render(report).split())  # the terminal wraps


def test_every_note_code_has_a_sentence() -> None:
    assert set(SENTENCES) == {code.value for code in NoteCode}


def test_analysis_writes_codes_beside_the_sentences_it_renders() -> None:
    report = report_of("data_dependent")
    codes = [f.code for f in report.findings]
    assert len(codes) == len(report.notes) >= 3 and "argument-spread" in codes
    assert all(code in SENTENCES for code in codes)
    assert report.notes == [note_text(f) for f in report.findings]
    spread = report.findings[codes.index("argument-spread")]
    assert len(spread.params["set_medians_us"]) == 4 and spread.params["ratio"] > 2  # figures, not text


def test_a_saved_report_renders_the_same_notes() -> None:
    report = report_of("data_dependent")
    data = json.loads(report.to_json())
    assert [f["code"] for f in data["findings"]] == [f.code for f in report.findings]
    back = Report.from_dict(data)
    assert back.findings == report.findings
    assert report_notes(back) == report.notes
    for fmt_name in ("text", "md", "html"):
        assert _rendered(back, fmt_name) == _rendered(report, fmt_name), fmt_name


def test_a_code_this_launchprof_does_not_know_keeps_its_stored_sentence() -> None:
    data = json.loads(report_of("decode_loop").to_json())
    data["notes"] = ["a note from a newer launchprof"]
    data["findings"] = [{"code": "from-the-future", "params": {"figure": 3}}]
    report = Report.from_dict(data)
    assert report_notes(report) == ["a note from a newer launchprof"]
    for fmt_name in ("text", "md", "html"):
        assert "a note from a newer launchprof" in _rendered(report, fmt_name), fmt_name


def test_a_known_code_is_written_from_its_params_and_unreadable_params_keep_the_stored_one() -> None:
    base = report_of("decode_loop")
    held = note(NoteCode.MEMORY_FOR_NO_GAIN, pool_bytes=3 << 20)
    broken = Note(NoteCode.MEMORY_FOR_NO_GAIN.value, {})
    report = dataclasses.replace(base, notes=["stale words", "kept words"], findings=[held, broken])
    assert report_notes(report) == ["replay is not measurably faster, yet the graph holds 3.0 MiB of GPU memory in its pool", "kept words"]


def test_a_report_without_findings_shows_its_notes_as_written() -> None:
    base = report_of("decode_loop")
    old = dataclasses.replace(base, notes=["written by an older launchprof"], findings=[])
    assert report_notes(old) == ["written by an older launchprof"]
    assert "written by an older launchprof" in _rendered(old, "md")


@pytest.mark.parametrize("text", ["the worker's own words", ""])
def test_free_text_is_a_record_too(text: str) -> None:
    assert note_text(text_note(text)) == text


def test_lint_writes_its_notes_as_records(tmp_path) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from launchprof.cli import app

    step, out = Path(__file__).resolve().parent / "data" / "lint" / "train_step.py", tmp_path / "lint.json"
    result = CliRunner().invoke(app, ["lint", str(step), "--all", "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    first = data["findings"][0]
    assert first["code"] == "lint-checked-all" and first["params"]["files"] == 1 and first["params"]["lines"] > 0
    assert len(data["findings"]) == len(data["notes"])
    assert data["notes"][0].startswith(f"lint checked every function ({first['params']['functions']}) in 1 file(s)")


def test_the_bucket_plan_writes_its_notes_as_records_and_renders_them() -> None:
    from test_buckets import MiB, measured_events

    from launchprof.analysis.bucket_advice import bucket_plan
    from launchprof.run.evidence import parse_events

    plan = bucket_plan(parse_events(measured_events([3, 8, 1], [1, 2, 4, 8], limit=MiB // 2)))
    over = next(f for f in plan.findings if f.code == "bucket-pool-over-limit")
    assert over.params == {"shared_pool_bytes": MiB, "limit_bytes": MiB // 2}
    assert plan.notes == [note_text(f) for f in plan.findings]
    report = dataclasses.replace(report_of("decode_loop"), buckets=dataclasses.replace(plan, notes=["stale words"] * len(plan.notes)))
    assert "the measured shared pool (1 MiB) passes --bucket-memory (0.5 MiB)" in _rendered(report, "md")


def test_the_bucket_plans_choice_is_a_record_and_its_explanation_the_sentence() -> None:
    plan = report_of("bucketed_decode").buckets
    choice = plan.explanation_finding
    assert choice is not None and choice.code == NoteCode.BUCKET_CHOICE.value
    assert plan.explanation == note_text(choice)
    assert choice.params["graphs"] == len(plan.recommended) and 0 <= choice.params["padding_waste"] < 1  # figures, not text
    dropped = note(NoteCode.BUCKET_CHOICE, source="user", largest=40, sizes=5, graphs=3, padding_waste=0.125, dropped=[32, 40],
                   limit_bytes=512 << 20, eager_calls=7, eager_above=16)
    assert note_text(dropped) == (
        "your --buckets list (5 sizes): 3 graphs, padding waste 12.5%; sizes 32, 40 dropped to keep the shared pool "
        "under 512 MiB (--bucket-memory): the 7 observed calls above 16 run eagerly"
    )


def test_the_bucket_plans_fix_is_a_record_where_padding_leaks() -> None:
    plan = report_of("batch_reduce").buckets
    assert plan.padding_safe is False and plan.fix_finding == note(NoteCode.PADDING_LEAKS)
    assert plan.fix == note_text(plan.fix_finding)
    assert report_of("bucketed_decode").buckets.fix_finding is None
