"""The worker's timing of the profile's eager-op loop, sampled between the bursts (worker/host_speed.py)."""

from __future__ import annotations

import json
import random

import pytest

from launchprof.worker.event_writer import EventWriter
from launchprof.worker.host_speed import COUNTS, WARM, HostSpeed
from tests.notes_said import said


def test_the_slope_drops_the_synchronise_and_survives_a_slow_sample():
    rng = random.Random(0)
    calls = []

    def loop(n: int) -> float:  # 6.5 µs per op, a 20 µs synchronize, a little noise, one hiccup
        calls.append(n)
        return 20.0 + 6.5 * n + rng.uniform(-1, 1) + (500.0 if len(calls) == 5 else 0.0)

    speed = HostSpeed(loop)
    for _ in range(5):
        speed.sample()
    assert speed.eager_op_us() == pytest.approx(6.5, rel=0.01)
    assert len(calls) == len(COUNTS) * (WARM + 5) and sorted(speed.samples) == sorted(COUNTS)


def test_without_cuda_the_plan_writes_a_note_not_an_error(tmp_path, monkeypatch):
    """No sampler (no device, or a CUDA error making its tensor): the bursts still run, and
    the run says why the host's speed is missing."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this checks the failure path")
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.plan import TargetRun
    from launchprof.worker.plan_bursts import run_plan_bursts

    class FakeEvent:
        def __init__(self, enable_timing: bool = False) -> None:
            pass

        def record(self) -> None:
            pass

        def elapsed_time(self, end: object) -> float:
            return 0.0

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="", repeat=10)
    run = TargetRun(lambda x: x * 2, "step", config, EventWriter(config.events_path))
    run.eager_sets.append(((torch.ones(2),), {}))
    run_plan_bursts(run)
    run.events.close()
    written = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert not any(e["type"] == "host-speed" for e in written)
    notes = [said(e) for e in written if e["type"] == "note"]
    assert len(notes) == 1 and "host's speed was not measured" in notes[0] and "uses the profile as measured" in notes[0]
    assert any(e["type"] == "timing" for e in written)  # the bursts ran all the same


def test_a_failed_sample_stops_the_sampling_and_is_a_note(tmp_path):
    def broken(n: int) -> float:
        raise RuntimeError("CUDA error: an illegal memory access")

    speed = HostSpeed(lambda n: 20.0 + 7.0 * n)
    speed.loop = broken
    speed.sample()
    assert speed.failed and speed.eager_op_us() is None
    calls = []
    speed.loop = lambda n: calls.append(n) or 20.0 + 7.0 * n
    speed.sample()
    assert calls == [] and speed.eager_op_us() is None  # stopped: no loop runs after a failure
    events = EventWriter(str(tmp_path / "e.jsonl"))
    speed.write(events, "between the bursts")
    events.close()
    written = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [e["type"] for e in written] == ["note"]
