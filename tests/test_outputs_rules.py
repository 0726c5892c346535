"""kept-output and loop-back findings, and the clone costs, from the worker's events.

The recorded H200 runs carry the watch's own events (``outputs``, ``kept-output``,
``loop-back``) and the clone timings and ``memory`` the costs are taken from. Each test here
takes a recorded run, strips those (:func:`without_watch`) and adds events written out in
full (the watch itself, worker/outputs_watch.py, is checked on CPU in
test_outputs_watch.py), so that every figure asserted is known; it analyses the result
through the product's one path, ``analyse``.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any

import pytest

from launchprof.analysis import analyse
from launchprof.model.core import Report
from launchprof.render import renderer_for
from launchprof.run import Run
from tests.recorded import load, run_names

CLONE_US = [12.0, 10.0, 11.0, 30.0, 9.0]
CLONE_BYTES = 4 * 1024 * 4  # logits of a batch of 4, 1024 floats


WATCH_EVENTS = ("outputs", "kept-output", "loop-back")


def is_watch_or_cost(e: dict[str, Any]) -> bool:
    """An event of the outputs watch, or one the clone costs are computed from."""
    return e["type"] in (*WATCH_EVENTS, "memory") or (e["type"] == "timing" and e.get("kind") == "clone")


def without_watch(run: Run, *, costs: bool = True) -> Run:
    """``run`` as a worker without the outputs watch would have written it (and, with
    ``costs``, without the clone timings and ``memory`` either)."""
    drop = is_watch_or_cost if costs else (lambda e: e["type"] in WATCH_EVENTS)
    return dataclasses.replace(run, events=[e for e in run.events if not drop(e)])


def with_events(name: str, *extra: dict[str, Any]) -> Run:
    run = without_watch(load(name))
    return dataclasses.replace(run, events=[*run.events, *extra])


def site(run: Run) -> dict[str, Any]:
    return next({k: e[k] for k in ("file", "line", "code")} for e in run.events if e["type"] == "call-site")


def kept_event(run: Run, count: int, **over: Any) -> dict[str, Any]:
    call = site(run)
    where = {"file": call["file"], "line": call["line"] + 1, "code": "history.append(logits)"}
    e = {
        "type": "kept-output", "t": 9.0, "index": 1 + count, "output": "", "output_name": "logits", "bytes": CLONE_BYTES // 2,
        "holder": "history", "holder_kind": "list", "holder_scope": "__main__", "where": where, "call_site": call, "count": count,
    }
    return {**e, **over}


def cost_events() -> list[dict[str, Any]]:
    return [
        {"type": "timing", "t": 8.0, "kind": "clone", "mode": "burst", "burst": 0, "wall_us": CLONE_US, "gpu_us": []},
        {"type": "memory", "t": 8.1, "clone_bytes": CLONE_BYTES, "static_bytes": 0},
        {"type": "outputs", "t": 8.2, "index": 2, "outputs": [{"path": "", "name": "logits", "bytes": CLONE_BYTES}]},
    ]


def test_kept_output_is_a_warning_on_the_storing_line_naming_the_holder():
    base = load("decode_loop")
    run = with_events("decode_loop", *cost_events(), *(kept_event(base, n) for n in (1, 2, 3, 4)))
    report = analyse(run)
    kept = [h for h in report.hazards if h.kind == "kept-output"]
    assert len(kept) == 1, kept  # one finding per holder, with the highest count
    h = kept[0]
    assert h.severity == "warning" and h.file == "sample_models/decode_loop.py" and h.line == site(base)["line"] + 1
    assert "`history` (a list in `__main__`) keeps every step's `logits`" in h.message
    assert "seen on 4 watched calls" in h.message and "`history.append(logits.clone())`" in h.message
    share = statistics.median(CLONE_US) / 2  # half of the output bytes
    assert f"about {share:.1f} µs per call" in h.message
    assert h.details["variable"] == "history" and h.details["calls"] == 4


def test_a_kept_view_says_it_shares_the_outputs_memory():
    base = load("decode_loop")
    report = analyse(with_events("decode_loop", *cost_events(), kept_event(base, 3, view=True, holder="last", holder_kind="dict")))
    h = next(h for h in report.hazards if h.kind == "kept-output")
    assert "`last` (a dict in `__main__`) keeps every step's `logits` (a view of it, which shares its memory)" in h.message
    assert "`logits.clone()` where `last` keeps it" in h.message


def test_the_report_says_which_clones_the_users_graph_needs_and_their_cost():
    base = load("decode_loop")
    report = analyse(with_events("decode_loop", *cost_events(), kept_event(base, 2)))
    out = report.outputs
    assert out is not None and [(k.holder, k.name, k.holder_kind, k.calls) for k in out.kept] == [("history", "logits", "list", 2)]
    assert out.clone_all_us == pytest.approx(statistics.median(CLONE_US))
    assert out.clone_needed_us == pytest.approx(statistics.median(CLONE_US) * 0.5)
    assert out.kept[0].clone_us == pytest.approx(out.clone_needed_us)
    assert "share, by bytes" in out.basis
    again = Report.from_dict(report.to_dict())
    assert again.outputs == out


def test_watched_outputs_that_nobody_keeps_need_no_clone():
    report = analyse(with_events("decode_loop", *cost_events()))
    assert report.outputs is not None and report.outputs.kept == [] and report.outputs.clone_needed_us == 0.0
    assert not [h for h in report.hazards if h.kind in ("kept-output", "loop-back")]


@pytest.mark.parametrize("name", run_names())
def test_runs_without_the_watch_have_no_outputs_section(name):
    run = without_watch(load(name), costs=False)  # an older worker's run: clone timings, no watch
    report = analyse(run)
    assert report.outputs is None
    assert not [h for h in report.hazards if h.kind in ("kept-output", "loop-back")]


KEPT_IN_RECORDINGS = {
    "side_effects": [("history", "output", "list", 5)],  # side_effects.py:18, history.append(y)
    "hf_static_decode": [("generated", "tokens", "list", 5)],  # hf_static_decode.py:53, generated.append(tokens)
}
LOOPED_IN_RECORDINGS = {"hf_static_decode": [("tokens", "", "tokens", "same-object")]}  # tokens = step(tokens, position)


@pytest.mark.parametrize("name", run_names())
def test_recorded_runs_were_watched_and_report_what_they_keep(name):
    report = analyse(load(name))
    assert report.outputs is not None  # the current worker watched every sample
    assert [(k.holder, k.name, k.holder_kind, k.calls) for k in report.outputs.kept] == KEPT_IN_RECORDINGS.get(name, [])
    assert len([h for h in report.hazards if h.kind == "kept-output"]) == len(report.outputs.kept)
    looped = LOOPED_IN_RECORDINGS.get(name, [])
    assert [(x.argument, x.output, x.name, x.how) for x in report.outputs.loop_back] == looped
    assert len([h for h in report.hazards if h.kind == "loop-back"]) == len(looped)


def test_loop_back_is_info_with_the_measured_copy_and_the_in_place_form():
    base = load("decode_loop")
    loop = {
        "type": "loop-back", "t": 9.0, "index": 3, "argument": "h", "output": "[1]", "output_name": "h", "how": "same-object",
        "bytes": 8192, "copy_us": 4.25, "site": site(base),
    }
    report = analyse(with_events("decode_loop", *cost_events(), loop, {**loop, "index": 4}))
    found = [h for h in report.hazards if h.kind == "loop-back"]
    assert len(found) == 1
    h = found[0]
    assert h.severity == "info" and h.line == site(base)["line"] and h.details["argument"] == "h"
    assert "`h` of each call is the `h` the previous call returned" in h.message
    assert "about 4.2 µs per call (8,192 bytes, measured alone)" in h.message
    assert "`h_static.copy_(h_new)`" in h.message
    assert report.outputs is not None and [(lb.argument, lb.output, lb.how, lb.copy_us) for lb in report.outputs.loop_back] == [("h", "[1]", "same-object", 4.25)]
    assert not [h for h in report.hazards if h.kind == "kept-output"]


@pytest.mark.parametrize("fmt", ["text", "md", "sarif", "junit", "html", "json"])
def test_every_format_shows_the_finding(fmt):
    base = load("decode_loop")
    report = analyse(with_events("decode_loop", *cost_events(), kept_event(base, 3)))
    text = renderer_for(fmt).render(report)
    assert "kept-output" in text or "Output kept past the next call" in text
