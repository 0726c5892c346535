"""The worker's timing of the profile's eager-op loop, sampled between the bursts (worker/host_speed.py)."""

from __future__ import annotations

import json
import random

import pytest

from launchprof.worker.events import EventWriter
from launchprof.worker.host_speed import COUNTS, REPS, HostSpeed, eager_op_slope, measure_host_speed


def test_the_slope_drops_the_synchronise_and_survives_a_slow_sample():
    rng = random.Random(0)
    calls = []

    def loop(n: int) -> float:  # 6.5 µs per op, a 20 µs synchronize, a little noise, one hiccup
        calls.append(n)
        return 20.0 + 6.5 * n + rng.uniform(-1, 1) + (500.0 if len(calls) == 5 else 0.0)

    op, samples = eager_op_slope(loop)
    assert op == pytest.approx(6.5, rel=0.01)
    assert len(calls) == len(COUNTS) * (REPS + 1) and sorted(samples) == sorted(str(n) for n in COUNTS)


def test_without_cuda_it_is_a_note_not_an_error(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this checks the failure path")
    events = EventWriter(str(tmp_path / "e.jsonl"))
    measure_host_speed(events)
    events.close()
    written = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [e["type"] for e in written] == ["note"] and "host's speed was not measured" in written[0]["text"]


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
