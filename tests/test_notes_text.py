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


# The worker's own notes: a NoteEvent written with a code and params reads as the sentence the
# worker wrote before it had codes (the old words, as recorded runs and users know them).
_ERR = "RuntimeError: CUDA error: an illegal memory access"
WORKER_NOTES = [
    (NoteCode.BURSTS_NOT_STARTED, {"error": _ERR}, f"timing bursts could not start ({_ERR}); the in-loop timings are reported"),
    (NoteCode.BURSTS_STOPPED, {"error": _ERR}, f"timing bursts stopped ({_ERR}); the in-loop timings are reported"),
    (NoteCode.STATE_NOT_RESTORED, {"after": "bursts", "error": _ERR}, f"state after the timing bursts could not be restored ({_ERR})"),
    (NoteCode.STATE_NOT_RESTORED, {"after": "compile", "error": _ERR}, f"state after the compile comparison could not be restored ({_ERR})"),
    (NoteCode.STATE_NOT_RESTORED, {"after": "buckets", "error": _ERR}, f"state after the bucket measurement could not be restored ({_ERR})"),
    (NoteCode.HOST_SPEED_NOT_MEASURED, {"reason": "sampler-failed", "error": _ERR},
     f"the host's speed was not measured ({_ERR}); the prediction uses the profile as measured"),
    (NoteCode.HOST_SPEED_NOT_MEASURED, {"reason": "sample-failed", "error": _ERR},
     f"the host's speed was not measured (a sample failed: {_ERR}); the prediction uses the profile as measured"),
    (NoteCode.HOST_SPEED_NOT_MEASURED, {"reason": "no-sample"},
     "the host's speed was not measured (no sample was taken); the prediction uses the profile as measured"),
    (NoteCode.CANDIDATES_NOT_RANKED, {"error": "KeyError: 'x'"}, "could not rank candidate targets: KeyError: 'x'"),
    (NoteCode.OUTPUT_WATCH_STOPPED, {"error": "RuntimeError: boom"}, "the kept-output watch stopped: RuntimeError: boom"),
    (NoteCode.TRACE_NOT_WRITTEN, {"error": "disk full"}, "profiler trace could not be written: disk full"),
    (NoteCode.WHOLE_SCRIPT_PROFILE_LOST, {"error": _ERR}, f"the whole-script profile was lost: {_ERR}"),
    (NoteCode.MEASUREMENT_NOT_CLOSED, {"error": "boom"}, "could not close the measurement: boom"),
    (NoteCode.STREAM_CHECK_FAILED, {"error": "boom"}, "the stream check could not run: boom"),
    (NoteCode.COMPILE_KERNELS_NOT_COUNTED, {"mode": "default", "error": _ERR}, f"compile (default): kernels per call not counted ({_ERR})"),
    (NoteCode.COMPILE_FRAMES_IN_TIMING, {"mode": "reduce-overhead", "frames": 2},
     "compile (reduce-overhead): dynamo compiled 2 frame(s) during the timed calls, after the warm-up; the compiled step time includes compiling"),
    (NoteCode.COMPILE_SKIPPED_RANKS, {}, "compile comparison skipped: the step runs on several ranks (torch.distributed)"),
    (NoteCode.COMPILE_SKIPPED_NO_CALLS, {}, "compile comparison skipped: no recorded calls to run it on"),
    (NoteCode.COMPILE_STATE_NOT_SAVED, {"error": _ERR}, f"compile comparison skipped: the user's state could not be saved ({_ERR})"),
    (NoteCode.COMPILE_ROUND_FAILED, {"mode": "reduce-overhead", "round": 1, "timed_out": True},
     "compile (reduce-overhead): round 1 timed out; its later rounds were not run"),
    (NoteCode.COMPILE_ROUND_FAILED, {"mode": "default", "round": 2, "timed_out": False}, "compile (default): round 2 failed; its later rounds were not run"),
    (NoteCode.BUCKETS_NOT_SET_UP, {"error": _ERR}, f"bucket plan not measured ({_ERR})"),
    (NoteCode.BUCKET_MEASUREMENT_STOPPED, {"error": _ERR}, f"bucket measurement stopped ({_ERR}); what it measured before is reported"),
    (NoteCode.BUCKETS_SHAPES_SAME, {}, "--buckets: the target's argument shapes did not vary between calls, so there is no bucket plan"),
    (NoteCode.STATE_LOST, {"after": "bursts", "paths": ["cache.pos", "feed"], "whys": ["not-cloned", "generator"], "count": 3, "stopped": True},
     "the timing bursts changed state that could not be put back: cache.pos (changed, not copied beforehand), feed (a generator, advanced) "
     "and 1 more; launchprof stopped the script there (the report holds what was measured), rather than let it run on changed state"),
    (NoteCode.STATE_LOST, {"after": "stream-check", "paths": ["x"], "whys": ["restore-failed"], "count": 1, "stopped": False},
     "the stream check changed state that could not be put back: x (putting it back failed); the script had ended"),
    (NoteCode.STATE_NOT_COVERED, {"paths": ["tok"], "whys": ["opaque"], "count": 1},
     "the step reaches state launchprof cannot save: tok (kept in C); if the step changes it, launchprof's extra calls "
     "(capture, validation, timing) change it too, and that is not undone"),
    (NoteCode.BUCKETS_UNMEASURABLE, {"reason": "not-captured", "sizes": 4}, "bucket plan not measured: the step was not captured"),
    (NoteCode.BUCKETS_UNMEASURABLE, {"reason": "no-recorded-call", "sizes": 4}, "bucket plan not measured: no recorded call carries the varying arguments"),
    (NoteCode.BUCKETS_UNMEASURABLE, {"reason": "too-many-sizes", "sizes": 40},
     "bucket plan not measured: 40 capture sizes are too many to measure in one run; pass --buckets with the sizes you would capture"),
    (NoteCode.BUCKETS_UNMEASURABLE, {"reason": "distributed", "sizes": 4},
     "bucket plan not measured: the step runs on several ranks (torch.distributed); measure the plan on one GPU"),
    (NoteCode.ASYNC_LOCATED, {"file": "s.py", "line": 17},
     "the faulting kernel was launched at s.py:17 (re-run with CUDA_LAUNCH_BLOCKING=1 by --locate-async; the script's side effects ran twice)"),
    (NoteCode.ASYNC_NOT_LOCATED, {},
     "--locate-async: the re-run with CUDA_LAUNCH_BLOCKING=1 did not raise the error again, so the launching line is unknown"),
    (NoteCode.INTERNAL_ERROR, {"error": "KeyError: 'x'"}, "launchprof internal error (the measurement stopped there): KeyError: 'x'"),
    (NoteCode.FIX_TRIALS_FAILED, {"error": _ERR}, f"the written fixes could not be tried ({_ERR}); they are shown as suggestions"),
    (NoteCode.STATE_LOST, {"after": "fix-trial", "paths": ["x"], "whys": ["restore-failed"], "count": 1, "stopped": False},
     "a fix's trial (its captures, eager calls and replays) changed state that could not be put back: x (putting it back failed); the script had ended"),
    (NoteCode.STOP_NOT_AGREED, {"error": _ERR}, f"the ranks could not agree where to stop the script ({_ERR}), so it ran to its end"),
]


@pytest.mark.parametrize(("code", "params", "old"), WORKER_NOTES, ids=[f"{c.value}-{i}" for i, (c, _, _) in enumerate(WORKER_NOTES)])
def test_a_worker_note_written_as_a_record_reads_as_its_old_sentence(code: NoteCode, params: dict, old: str) -> None:
    from launchprof.events.lifecycle_events import NoteEvent
    from launchprof.run.evidence import parse_events
    from launchprof.events.record import event_dict

    line = json.loads(json.dumps(event_dict(NoteEvent(code=code, params=params))))  # as the event log holds it
    assert line == {"type": "note", "code": code.value, "params": params}
    (found,) = parse_events([{**line, "t": 1.0}]).notes
    assert found == Note(code.value, params)
    assert note_text(found) == old


def test_the_worker_notes_with_fixed_words_read_as_before() -> None:
    assert note_text(note(NoteCode.REPROFILED)) == (
        "launchprof's first profiled calls recorded no GPU activity, so the next calls are profiled again in their place (after a torch.profiler "
        "session earlier in this process, the first one under CUPTI teardown comes back empty)"
    )
    assert note_text(note(NoteCode.SANITIZER_IMPORTED)) == (
        "PyTorch's CUDA sanitizer was imported in this process before (a stream check, launchprof.check): its hooks "
        "slow every CUDA op here, so the step times read high; time it in a fresh process"
    )


def test_every_worker_code_is_checked_against_its_old_sentence() -> None:
    members = list(NoteCode)
    worker_codes = set(members[members.index(NoteCode.INTERNAL_ERROR):])  # findings.py lists them last
    checked = {code for code, _, _ in WORKER_NOTES} | {NoteCode.REPROFILED, NoteCode.SANITIZER_IMPORTED}
    assert worker_codes == checked


def test_a_note_recorded_as_a_sentence_still_reads_as_written() -> None:
    from launchprof.run.evidence import parse_events

    (found,) = parse_events([{"type": "note", "t": 1.0, "text": "an old run's words"}]).notes
    assert found == text_note("an old run's words") and note_text(found) == "an old run's words"


def test_the_worker_sites_write_codes_not_sentences(tmp_path) -> None:
    from launchprof.analysis.failure import located_note
    from launchprof.events.lifecycle_events import ScriptException
    from launchprof.worker.event_writer import EventWriter, event_dict
    from launchprof.model.findings import HostSpeedMissing
    from launchprof.worker.host_speed import HostSpeed, write_unmeasured

    assert event_dict(located_note(ScriptException(file="s.py", line=17))) == {"type": "note", "code": "async-located", "params": {"file": "s.py", "line": 17}}
    assert event_dict(located_note(None)) == {"type": "note", "code": "async-not-located", "params": {}}
    events = EventWriter(str(tmp_path / "e.jsonl"))
    write_unmeasured(events, HostSpeedMissing.SAMPLER_FAILED, "RuntimeError: no CUDA")
    HostSpeed(lambda n: 1.0).write(events, "between the bursts")  # no sample taken
    events.close()
    lines = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [(e["code"], e["params"]) for e in lines] == [
        ("host-speed-not-measured", {"reason": "sampler-failed", "error": "RuntimeError: no CUDA"}),
        ("host-speed-not-measured", {"reason": "no-sample"}),
    ]
    assert all("text" not in e for e in lines)
