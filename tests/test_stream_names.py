"""Streams in a finding's words: by the variable the code enters them with, else "side stream
1, 2, ..." in the order the checked call first used them; never a raw CUDA stream id
(540883312), which stays in the hazard's params as data. From hand-built race-check events
over a real script in a temporary folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launchprof.events.capture_events import Race, RaceAccess, RaceCheckEvent, RaceOp
from launchprof.events.record import event_dict
from launchprof.hazards.rules import find_hazards
from launchprof.hazards.stream_names import side_streams, stream_variable
from launchprof.run.evidence import parse_events

SCRIPT = '''\
import torch


class Pipe:
    def step(self, x, staging, other):
        with torch.cuda.stream(self.copy_stream):
            staging.copy_(x)
        y = staging * 2.0
        torch.cuda.set_stream(self.spare)
        other.fill_(1.0)
        torch.cuda.set_stream(self.main)
        z = other + 1.0
        return y + z
'''
LINES = {text.strip(): i for i, text in enumerate(SCRIPT.splitlines(), 1)}
ORIGIN, COPY, SPARE = 94_000_001, 540_883_312, 612_004_448


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "pipe.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return str(path)


def access(script: str, text: str, kind: str, stream: int) -> RaceAccess:
    return RaceAccess(file=script, line=LINES[text], code=text, function="step", type=kind, stream=stream, op="aten::op")


def races(script: str) -> list[Race]:
    return [
        Race(data_ptr=1, previous=access(script, "staging.copy_(x)", "write", COPY), access=access(script, "y = staging * 2.0", "read", ORIGIN)),
        Race(data_ptr=2, previous=access(script, "other.fill_(1.0)", "write", SPARE), access=access(script, "z = other + 1.0", "read", ORIGIN)),
    ]


def check(script: str, ops: list[int]) -> RaceCheckEvent:
    return RaceCheckEvent(status="ok", origin_stream=ORIGIN, races=races(script), ops=[RaceOp(op="aten::op", stream=s) for s in ops], ops_total=len(ops))


def test_the_variable_of_the_with_around_a_line(script: str) -> None:
    assert stream_variable(script, LINES["staging.copy_(x)"]) == "self.copy_stream"
    assert stream_variable(script, LINES["other.fill_(1.0)"]) is None  # set_stream: no block to read
    assert stream_variable(script, LINES["with torch.cuda.stream(self.copy_stream):"]) is None  # the with line runs on the caller's


def test_side_streams_are_numbered_by_first_use_and_named_where_known(script: str) -> None:
    rc = check(script, [ORIGIN, SPARE, COPY, ORIGIN])
    assert side_streams(rc, [a for r in rc.races for a in (r.previous, r.access)]) == {SPARE: (1, None), COPY: (2, "self.copy_stream")}


def test_race_words_name_streams_without_their_ids(script: str) -> None:
    hazards = find_hazards(parse_events([event_dict(check(script, [ORIGIN, SPARE, COPY]))]))
    by_line = {h.line: h for h in hazards if h.kind == "stream-race"}
    named, numbered = by_line[LINES["y = staging * 2.0"]], by_line[LINES["z = other + 1.0"]]
    assert "side stream `self.copy_stream`" in named.message and "the calling stream" in named.message
    assert "wait_stream(self.copy_stream)" in named.details["fix"]
    assert "side stream 1" in numbered.message and "wait_stream(<side stream 1>)" in numbered.details["fix"]
    for h in (named, numbered):
        words = h.message + h.hint + str(h.details["fix"]) + (h.fix.note if h.fix else "")
        assert not re.search(r"\d{5,}", words), words
    assert (named.params["write_stream"], numbered.params["write_stream"]) == (COPY, SPARE)  # kept as data
