"""A quiet report (issue 34 item 5): the terminal's default view is short; --explain adds
every figure, the prediction's basis and why, the graph line, the descriptive notes and
the legend; JSON keeps every note, each marked actionable or not."""

from __future__ import annotations

import dataclasses
import json

import pytest

import reports
from launchprof.analysis.concurrency import MIN_SAVING_SHARE, MIN_SAVING_US, concurrency_notes
from launchprof.analysis.notes import TIMINGS_DISAGREE_RATIO, timings_disagree
from launchprof.events.capture_events import RaceCheckEvent, RaceOp
from launchprof.model.findings import Note, NoteCode
from launchprof.model.records import adapter
from launchprof.model.step_timing import Stats
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.number_rows import key_numbers
from launchprof.render.words.notes_text import note_text, report_notes
from launchprof.analysis.load import open_saved
from recorded import RUNS, report_of

# Rows and lines the default view leaves to --explain.
EXPLAIN_ONLY = [
    "Kernels per eager step", "Graph nodes", "Setup (capture + warm-up + instantiate)", "Predicted speedup",
    "GPU idle (eager, profiled)", "Launch gap (eager, profiled, median)", "One-time library workspace",
    "Prediction basis", "Prediction, why", "graph: ", "Terms", "driver 580.159.04",
]  # fmt: skip


def as_reported(name: str):
    """The report `launchprof report RUN` renders: with the device profile the run carries."""
    return open_saved(RUNS / f"{name}.lprun")[0]


def text(report, explain: bool = False, width: int = 80, fmt: str = "text") -> str:
    return renderer_for(fmt, RenderOptions(width=width, explain=explain)).render(report)


def test_a_clean_graphs_help_report_fits_40_lines_at_80_columns():
    report = as_reported("decode_loop")
    assert report.verdict == "graphs-help" and all(h.severity == "info" for h in report.hazards)
    plain = text(report)
    assert len(plain.splitlines()) <= 40, plain
    assert max(len(line) for line in plain.splitlines()) <= 80
    for row in ("Eager step", "Replay step (copy-in + replay)", "Speedup (eager / replay)", "Replays to pay back",
                "Graph memory (its own pool)", "Validation (replay vs eager)"):  # fmt: skip
        assert row in plain, row
    assert len(text(report, explain=True).splitlines()) > len(plain.splitlines()) + 30


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_explain_adds_the_rows_the_default_drops(fmt):
    report = as_reported("decode_loop")
    assert report.prediction is not None
    plain, explained = text(report, fmt=fmt, width=200), text(report, explain=True, fmt=fmt, width=200)
    for row in EXPLAIN_ONLY:
        if fmt == "md" and row in ("Prediction, why", "driver 580.159.04"):
            continue  # Markdown quotes the why without a label; its machine line is always whole
        assert row not in plain, row
        assert row in explained, row
    assert "ratio of the eager and replay step medians" in explained


def test_html_keeps_every_row():
    html = renderer_for("html", RenderOptions()).render(report_of("decode_loop"))
    for row in ("Kernels per eager step", "Graph nodes", "Setup (capture + warm-up + instantiate)", "Predicted speedup"):
        assert row in html, row


def _two_chains(long_us: float, short_us: float, backward_ops: int | None = 0) -> tuple[RaceCheckEvent, list[float]]:
    """Two independent ops on one stream: a fork/join could save the shorter one's time."""
    ops = [RaceOp(stream=7, deps=[]), RaceOp(stream=7, deps=[])]
    return RaceCheckEvent(status="ok", ops=ops, ops_total=2, backward_ops=backward_ops), [long_us, short_us]


@pytest.mark.parametrize(
    ("long_us", "short_us", "step_us", "actionable"),
    [
        (100.0, 30.0, 30.0 / MIN_SAVING_SHARE - 1, True),  # 30 µs, just over 10% of the step
        (100.0, 30.0, 30.0 / MIN_SAVING_SHARE + 1, False),  # 30 µs, just under 10%
        (100.0, MIN_SAVING_US, 100.0, True),  # 20 µs, 20% of the step
        (100.0, MIN_SAVING_US - 0.5, 100.0, False),  # under 20 µs, 19.5% of the step
        (8.0, 6.0, 20.0, False),  # microsecond kernels: 30% of a 20 µs step, still under 20 µs
    ],
)
def test_stream_advice_needs_both_thresholds(long_us, short_us, step_us, actionable):
    rc, durations = _two_chains(long_us, short_us)
    [found] = concurrency_notes(None, rc, durations, step_us=step_us)
    assert found.code == NoteCode.INDEPENDENT_CHAINS and found.actionable is actionable
    assert found.params["saving_us"] == pytest.approx(short_us)
    said = note_text(found)
    assert "op counts" not in said and "one to one" not in said
    assert "second stream" in said and f"{round(100 * short_us / step_us)}% of the eager step" in said


def test_no_stream_advice_inside_backward():
    rc, durations = _two_chains(1000.0, 900.0, backward_ops=3)
    notes = concurrency_notes(None, rc, durations, step_us=2000.0)
    assert [n.code for n in notes] == [NoteCode.NO_STREAM_ADVICE] and not notes[0].actionable
    report = report_of("train_step_keeps_loss")  # recorded on the H200: loss.backward() in the step
    assert NoteCode.INDEPENDENT_CHAINS not in [f.code for f in report.findings]
    assert "second stream" not in text(report)


def test_the_recorded_microsecond_chains_are_not_advice():
    """decode_loop's chains could save ~109 µs of a 1.86 ms step (6%): kept in JSON, not shown."""
    report = report_of("decode_loop")
    [chains] = [f for f in report.findings if f.code == NoteCode.INDEPENDENT_CHAINS]
    assert not chains.actionable and chains.params["saving_us"] < MIN_SAVING_SHARE * chains.params["step_us"]
    assert "independent chains" not in text(report) and "independent chains" in text(report, explain=True)


def test_descriptive_notes_only_with_explain_and_always_in_json():
    report = report_of("bucketed_decode")
    descriptive = [f for f in report.findings if not f.actionable]
    assert {f.code for f in descriptive} >= {NoteCode.IN_LOOP_SHORT, NoteCode.CALIBRATION_MEASURED, NoteCode.EXTRA_GRAPH_NODES}
    plain, explained = " ".join(text(report, width=300).split()), " ".join(text(report, explain=True, width=300).split())
    data = json.loads(renderer_for("json", RenderOptions()).render(report))
    for record in descriptive:
        said = note_text(record)
        assert said not in plain and said in explained
        assert {"code": record.code, "params": record.params, "actionable": False} in data["findings"]
    assert len(data["notes"]) == len(report.findings)
    assert len(report_notes(report, everything=False)) < len(report_notes(report))


def test_the_calibration_note_is_said_of_the_recording():
    """A re-rendered run is read elsewhere: the cache path is the recording machine's."""
    [cal] = [f for f in report_of("bucketed_decode").findings if f.code == NoteCode.CALIBRATION_MEASURED]
    assert note_text(cal).startswith("when this run was recorded") and "on the recording machine" in note_text(cal)


def test_a_report_written_before_actionable_reads_by_its_code():
    assert adapter(Note).validate_python({"code": "extra-graph-nodes", "params": {}}).actionable is False
    assert adapter(Note).validate_python({"code": "no-device-profile", "params": {}}).actionable is True
    assert adapter(Note).validate_python({"code": "independent-chains", "params": {}}).actionable is False  # no estimate


def test_timings_that_disagree_are_explained():
    report = report_of("side_effects")  # in-loop 76 µs eager / 44 µs replay against bursts of 26 / 12 µs
    [said] = [f for f in report.findings if f.code == NoteCode.TIMINGS_DISAGREE]
    assert said.params["ratio"] > TIMINGS_DISAGREE_RATIO and not said.actionable
    sentence = note_text(said)
    assert "in the script's loop" in sentence and "bursts" in sentence and "back to back" in sentence
    plain, explained = text(report, width=300), text(report, explain=True, width=300)
    assert "in the script's loop" not in plain  # neither the in-loop rows nor the note
    assert "Eager step in the script's loop" in explained and sentence in " ".join(explained.split())


def test_close_timings_need_no_note():
    eager = dataclasses.replace(reports.graphs_help().eager, timing="burst", in_loop_step_us=Stats(1843.2 * 1.4, 1, 2, 20))
    assert timings_disagree(eager, None) is None
    far = dataclasses.replace(eager, in_loop_step_us=Stats(1843.2 * 1.6, 1, 2, 20))
    assert timings_disagree(far, None) is not None


def _whole_script(report):
    return dataclasses.replace(report, target=None, verdict="eager-only", replay=None, speedup=None, breakeven_replays=None,
                               validation=None, predicted_speedup=None)  # fmt: skip


@pytest.mark.parametrize("explain", [False, True])
def test_no_step_figures_without_a_step(explain):
    eager = dataclasses.replace(reports.graphs_help().eager, step_us=None)
    report = _whole_script(dataclasses.replace(reports.graphs_help(), eager=eager))
    rows = dict(key_numbers(report, explain))
    assert rows["Kernels in the whole run"] == "212"
    assert not any("step" in label.lower() or "replay" in label.lower() for label in rows), rows
    for fmt in ("text", "md", "html"):
        out = renderer_for(fmt, RenderOptions(width=120, explain=explain)).render(report)
        assert "Kernels per eager step" not in out and "kernels per eager step" not in out, fmt


@pytest.mark.parametrize("explain", [False, True])
def test_an_eager_only_run_has_no_replay_rows(explain):
    report = dataclasses.replace(reports.graphs_help(), verdict="eager-only", replay=None, speedup=None, breakeven_replays=None, validation=None)
    rows = dict(key_numbers(report, explain))
    assert "Eager step" in rows
    assert not any(word in label for label in rows for word in ("Replay", "Graph", "Speedup (", "pay back", "Validation")), rows
    assert ("Kernels per eager step" in rows) is explain
