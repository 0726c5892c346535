"""The kept-output / loop-back watch (worker/outputs_watch.py) on CPU tensors.

The watch works on weak references and ``gc.get_referrers``, which behave the same for CPU
tensors: each test drives it through a stand-in for the plan's wrapper, from loops written
the way scripts write them, and reads the events it wrote.
"""

from __future__ import annotations

import collections
import sys
from typing import Any

import torch

from launchprof.events.record import event_dict
from launchprof.worker.outputs_watch import OutputsWatch, copy_us
from tests.notes_said import said


class Events:
    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []

    def write(self, record: Any) -> None:
        self.log.append(event_dict(record))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.log if e["type"] == kind]


class Wrapped:
    """What TargetRun.__call__ does around the user's call, with the caller's frame."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.events, self.calls = fn, Events(), 0
        self.watch = OutputsWatch(fn, self.events)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.watch.before(self.calls, args, kwargs, sys._getframe(1))
        out = self.fn(*args, **kwargs)
        self.calls += 1
        self.watch.after(self.calls - 1, out, sys._getframe(1))
        return out


def decode(tok: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = torch.tanh(h + tok)
    return h * 2, h


def logits_of(x: torch.Tensor) -> torch.Tensor:
    return x * 3


HISTORY: list[torch.Tensor] = []


def line_of(text: str) -> int:
    src = open(__file__, encoding="utf-8").read().splitlines()
    return next(i for i, line in enumerate(src, start=1) if text in line and "line_of(" not in line)


def test_a_list_in_the_callers_frame_keeps_every_steps_output():
    step = Wrapped(logits_of)
    history = []
    x = torch.ones(4)
    for _ in range(10):
        logits = step(x)
        history.append(logits)  # the kept line
    kept = step.events.of("kept-output")
    assert kept, step.events.log
    e = kept[-1]
    assert (e["holder"], e["holder_kind"], e["output_name"], e["output"]) == ("history", "list", "logits", "")
    assert e["holder_scope"] == "test_a_list_in_the_callers_frame_keeps_every_steps_output()"
    assert e["where"]["line"] == line_of("history.append(logits)  # the kept line")
    assert e["call_site"]["line"] == line_of("logits = step(x)") and e["count"] == len(kept) >= 4
    assert step.events.of("outputs")[0]["outputs"] == [{"path": "", "name": "logits", "bytes": 16}]
    assert not step.events.of("loop-back")


def test_a_module_global_list_is_named_with_its_module():
    step = Wrapped(logits_of)
    HISTORY.clear()
    for _ in range(8):
        y = step(torch.ones(2))
        HISTORY.append(y)
    e = step.events.of("kept-output")[-1]
    assert (e["holder"], e["holder_kind"], e["holder_scope"]) == ("HISTORY", "list", __name__)
    assert e["where"]["line"] == line_of("HISTORY.append(y)")
    HISTORY.clear()


def test_tuples_in_a_deque_and_an_attribute_are_found():
    step = Wrapped(decode)
    window = collections.deque(maxlen=100)
    h = torch.zeros(3)
    for _ in range(8):
        out = step(torch.ones(3), h)
        window.append(out)
        h = out[1].clone()
    holders = {(e["holder"], e["holder_kind"]) for e in step.events.of("kept-output")}
    assert ("window", "deque") in holders

    class Cache:
        def __init__(self) -> None:
            self.last: list[torch.Tensor] = []

    cache, step2 = Cache(), Wrapped(logits_of)
    for _ in range(8):
        z = step2(torch.ones(2))
        cache.last.append(z)
    e = step2.events.of("kept-output")[-1]
    assert (e["holder"], e["holder_kind"]) == ("cache.last", "list")
    assert e["where"]["line"] == line_of("cache.last.append(z)")


def test_a_kept_view_of_an_output_is_kept():
    step = Wrapped(logits_of)
    last = {}
    x = torch.arange(8.0).reshape(2, 4)
    for i in range(10):
        out = step(x)
        last[i] = out[:, -1]  # a view: it aliases the output's memory
    e = step.events.of("kept-output")[-1]
    assert (e["holder"], e["holder_kind"], e["view"], e["output_name"]) == ("last", "dict", True, "out")
    assert e["where"]["line"] == line_of("last[i] = out[:, -1]")


def update_in_place(x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h.copy_(torch.tanh(h + x))
    return h * 2, h


def test_state_the_step_updates_in_place_is_neither_kept_nor_looped_back():
    step = Wrapped(update_in_place)
    h = torch.arange(4.0)
    for _ in range(10):
        y, h = step(torch.ones(4), h)
    assert step.events.of("kept-output") == [] and step.events.of("loop-back") == []
    assert step.watch.checked == 5


def test_outputs_read_or_overwritten_before_the_next_call_are_not_kept():
    step = Wrapped(logits_of)
    total = torch.zeros(4)
    x = torch.ones(4)
    for _ in range(10):
        logits = step(x)
        total += logits  # read only
        x = logits.argmax().float().expand(4).contiguous()  # derived, not the output
    assert step.events.of("kept-output") == []
    assert step.events.of("loop-back") == []
    assert step.watch.checked == 5  # calls 2-6 were each checked after the following call


def test_state_that_loops_back_is_named_without_a_kept_warning():
    step = Wrapped(decode)
    h = torch.zeros(5)
    for _ in range(10):
        logits, h = step(torch.ones(5), h)
    loops = step.events.of("loop-back")
    assert [(e["argument"], e["output"], e["output_name"], e["how"]) for e in loops] == [("h", "[1]", "h", "same-object")]
    assert loops[0]["bytes"] == 20 and loops[0]["copy_us"] > 0
    assert loops[0]["site"]["line"] == line_of("logits, h = step(torch.ones(5), h)")
    assert step.events.of("kept-output") == []


def test_state_passed_back_as_a_copy_loops_back_by_contents():
    step = Wrapped(decode)
    h = torch.arange(5.0) / 5  # not constant: equal zeros would be a coincidence
    keep = None
    for _ in range(10):
        keep, h2 = step(torch.ones(5), h)
        h = h2.clone()
        del keep
    loops = step.events.of("loop-back")
    assert [(e["argument"], e["how"]) for e in loops] == [("h", "equal-contents")]


def test_a_watch_failure_is_a_note_not_the_users_exception(monkeypatch):
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("launchprof.worker.outputs_watch.leaves", boom)
    step = Wrapped(logits_of)
    outs = [step(torch.ones(1)) for _ in range(8)]
    assert len(outs) == 8 and all(torch.equal(o, torch.full((1,), 3.0)) for o in outs)
    notes = step.events.of("note")
    assert len(notes) == 1 and "kept-output watch stopped: RuntimeError: boom" in said(notes[0])


def test_copy_us_times_a_copy():
    assert copy_us(torch.ones(1 << 16)) > 0
