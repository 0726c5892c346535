"""stream-race on CPU: the access log's dependencies, the sanitizer's accesses turned into
user lines, the rule's message and fix, and the sanitizer switched off after its pass."""

from __future__ import annotations

import traceback
from pathlib import Path

from launchprof.events.capture_events import Race, RaceCheckEvent
from launchprof.run.evidence import parse_events
from launchprof.hazards.rules import find_hazards
from launchprof.events.record import event_dict
from launchprof.worker.race_check import AccessLog, _registries, access_of, sanitized
from recorded import SAMPLES, expected_markers

RACE = SAMPLES / "stream_race.py"


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _access(kind: str, stream: int, line: int, op: str):
    from torch.cuda import _sanitizer as csan

    frames = traceback.StackSummary.from_list([(str(RACE), line, "step", None)])
    return csan.Access(csan.AccessType[kind], 1, stream, op, [], False, frames)


def test_access_log_dependencies():
    log = AccessLog()
    log.launch(7, set(), {100}, "aten::copy_")  # 0 writes a
    log.launch(9, {100}, {200}, "aten::mul")  # 1 reads a, writes b
    log.launch(7, set(), set(), "aten::view")  # a view: no memory, not an op
    log.launch(7, {300}, {400}, "aten::relu")  # 2 independent
    log.launch(7, set(), {100}, "aten::fill_")  # 3 overwrites a after 1 read it
    assert [op.deps for op in log.ops] == [[], [0], [], [0, 1]]
    assert [op.stream for op in log.ops] == [7, 9, 7, 7]


def test_sanitizer_access_names_the_user_line():
    write_line = _line(RACE, "staging.copy_(x)")
    a = access_of(_access("WRITE", 11, write_line, "aten::copy_"))
    assert (a.type, a.line, a.stream) == ("write", write_line, 11)
    assert a.code.startswith("staging.copy_(x)")


def _race_events(races: list[Race]) -> list[dict]:
    """The events a run with these races holds, as the worker writes them."""
    return [
        {"type": "capture", "ok": True, "graph_nodes": 3, "node_types": {"memcpy": 1, "kernel": 2}},
        {"type": "anatomy", "node_count": 3, "nodes": [{"id": 0, "type": "memcpy"}, {"id": 1, "type": "kernel"}, {"id": 2, "type": "kernel"}], "edges": [[0, 2], [1, 2]]},
        event_dict(RaceCheckEvent(status="ok", origin_stream=7, races=races, ops=[], ops_total=0)),
    ]


def test_rule_reports_the_read_the_write_and_the_fix():
    read_line, write_line = _line(RACE, "y = staging * 2.0"), _line(RACE, "staging.copy_(x)")
    log = AccessLog()

    class Err:
        data_ptr = 1
        current_access = _access("READ", 7, read_line, "aten::mul.Tensor")
        previous_access = _access("WRITE", 11, write_line, "aten::copy_")

    log.add_errors([Err(), Err()])  # the same pair twice is one race
    assert len(log.races) == 1
    hazards = find_hazards(parse_events(_race_events(log.races)))
    assert [(h.kind, h.severity.value, Path(h.file).name, h.line) for h in hazards] == [("stream-race", "error", RACE.name, read_line)]
    assert ("stream-race", RACE.name, read_line) in expected_markers(RACE)
    h = hazards[0]
    assert f"line {write_line}" in h.message and "side stream `side`" in h.message and "the calling stream" in h.message
    assert "11" not in h.message and h.params["write_stream"] == 11  # the raw id is data only
    assert "no edge between them" in h.message and h.details["graph_confirms"] is True
    assert h.details["write"]["line"] == write_line
    assert f"before line {read_line}" in h.details["fix"] and "wait_stream(side)" in h.details["fix"]


def test_no_races_no_hazard():
    assert not [h for h in find_hazards(parse_events(_race_events([]))) if h.kind == "stream-race"]


def test_sanitizer_is_switched_off_after_its_pass():
    from torch.cuda import _sanitizer  # noqa: F401  (registers the module's own callbacks once)
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    before = [len(r.callback_list) for r in _registries()]
    log = AccessLog()
    seen = []
    # No tensor op: the mode asks for the current CUDA stream per op, which CPU torch lacks.
    assert sanitized(lambda: seen.append(_get_current_dispatch_mode()) or 42, log) == 42
    assert seen[0] is not None  # it was on during the call
    assert _get_current_dispatch_mode() is None  # and off after it
    assert [len(r.callback_list) for r in _registries()] <= before  # nothing of ours left
    assert log.ops == []
