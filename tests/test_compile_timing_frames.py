"""Frames dynamo compiles during the compile comparison's timed calls (CPU).

The warm-up stops at the first pass over the argument sets that compiles nothing; a guard
that fails only later would put compiling inside the timed calls. The bursts count the
frames compiled meanwhile (``frames_in_timing``), and the report carries the count. Here the
bursts run on CPU tensors, with torch.cuda's synchronise and events replaced by host
stand-ins (burst.py calls nothing else of CUDA). Slow: real compiles (~5-30 s on a small CPU).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from launchprof.analysis.compile import compile_result  # noqa: E402
from launchprof.events.compile_events import CompileEvent
from launchprof.run.evidence import parse_events
from launchprof.events.record import event_dict
from launchprof.worker.compile_compare import _bursts, warm_up  # noqa: E402

CALLS = [0]
LATE = 12  # more calls than the warm-up makes (3 passes over 2 sets), fewer than the bursts


class Events:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def write(self, record: Any) -> None:
        self.items.append(event_dict(record))


class HostEvent:
    def __init__(self, **_: Any) -> None:
        self.t = 0.0

    def record(self) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, end: HostEvent) -> float:
        return (end.t - self.t) * 1e3


@torch._dynamo.disable
def _late() -> bool:
    CALLS[0] += 1
    return CALLS[0] > LATE


def late_step(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    if _late():  # a graph break; dynamo specialises the code after it on this bool
        return y - 1
    return y + 1


def steady_step(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 2) + 1


@pytest.fixture
def host_bursts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda, "Event", HostEvent)


def _frames_in_timing(fn: Any) -> tuple[int, Events, int]:
    CALLS[0] = 0
    sets = [((torch.randn(8),), {}), ((torch.randn(8),), {})]
    compiled, result = warm_up(fn, "default", sets, timeout_s=300)
    assert compiled is not None and result.status == "ok", result.error
    events = Events()
    frames = _bursts(compiled, "compile-no-cudagraphs", sets, 5, events)
    torch._dynamo.reset()
    return frames, events, result.warmup_calls


@pytest.mark.usefixtures("host_bursts")
def test_a_recompile_in_the_timed_calls_is_counted() -> None:
    frames, events, warmup_calls = _frames_in_timing(late_step)
    assert warmup_calls < LATE < CALLS[0]  # the guard flipped inside the bursts, not before
    assert frames >= 1
    assert [e for e in events.items if e["type"] == "timing"]  # the bursts did run


@pytest.mark.usefixtures("host_bursts")
def test_a_steady_step_compiles_nothing_in_the_timed_calls() -> None:
    frames, events, _ = _frames_in_timing(steady_step)
    assert frames == 0
    assert sum(len(e["wall_us"]) for e in events.items if e["type"] == "timing") >= 5


def test_the_report_carries_the_count() -> None:
    event = CompileEvent(mode="default", field="compile-no-cudagraphs", status="ok", frames_in_timing=2, passes=3)
    result = compile_result(event, parse_events([]))
    assert result.details["frames_in_timing"] == 2 and result.details["passes"] == 3
    no_count = dataclasses.replace(event, frames_in_timing=None)
    assert "frames_in_timing" not in compile_result(no_count, parse_events([])).details
