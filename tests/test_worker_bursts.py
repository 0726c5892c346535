"""Burst timing on CPU: the device synchronisation and CUDA events are replaced by fakes,
the schedule, the time cap, the events and the protection of the user's state are real."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker import burst  # noqa: E402
from launchprof.worker.burst import Kind, run_bursts, schedule  # noqa: E402
from launchprof.worker.config import WorkerConfig, plan_size  # noqa: E402
from launchprof.worker.event_writer import EventWriter
from tests.notes_said import said  # noqa: E402


class FakeEvent:
    clock = 0.0

    def __init__(self, enable_timing: bool = False) -> None:
        self.at = 0.0

    def record(self) -> None:
        FakeEvent.clock += 1.0
        self.at = FakeEvent.clock

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.at - self.at) * 1e-3  # ms


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)


def read(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_schedule_gives_at_least_repeat_samples_in_an_even_number_of_bursts():
    for repeat in (1, 3, 10, 25, 50, 51, 200):
        bursts, per = schedule(repeat)
        assert bursts * per >= repeat and bursts % 2 == 0 and bursts >= 2


def test_plan_completes_within_seventy_calls_at_the_default_repeat():
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path="", trace_path="")
    assert config.repeat == 50 and config.calibrate is True
    assert plan_size(config) <= 60


def test_bursts_alternate_order_and_write_one_event_per_burst_per_kind(tmp_path, fake_cuda):
    order: list[str] = []
    kinds = [Kind("eager", [lambda: order.append("e")]), Kind("replay", [lambda: order.append("r")]), Kind("clone", [lambda: order.append("c")])]
    events = EventWriter(str(tmp_path / "e.jsonl"))
    run_bursts(kinds, repeat=20, events=events)
    log = read(tmp_path / "e.jsonl")
    bursts, per = schedule(20)
    timing = [e for e in log if e["type"] == "timing"]
    assert len(timing) == 3 * bursts
    assert all(e["mode"] == "burst" and len(e["wall_us"]) == len(e["gpu_us"]) == per for e in timing)
    assert {e["kind"] for e in timing} == {"eager", "replay", "clone"}
    # the first burst starts with eager, the second with replay (after one untimed call each)
    timed = order[3:]
    assert timed[0] == "e" and timed[3 * per] == "r"
    ends = {e["kind"]: e for e in log if e["type"] == "timing-end"}
    assert ends["eager"]["samples"] == bursts * per and ends["eager"]["stopped_early"] is False
    assert all(g == pytest.approx(1.0) for e in timing for g in e["gpu_us"])


def test_a_kind_stops_at_its_time_cap_and_says_so(tmp_path, fake_cuda, monkeypatch):
    import time as real_time

    ticks = iter(range(10**6))
    monkeypatch.setattr(burst.time, "perf_counter", lambda: float(next(ticks)) * 0.5)  # each timed call: 0.5 s
    events = EventWriter(str(tmp_path / "e.jsonl"))
    run_bursts([Kind("eager", [lambda: None])], repeat=50, events=events, time_cap_s=2.0)
    end = next(e for e in read(tmp_path / "e.jsonl") if e["type"] == "timing-end")
    assert end["stopped_early"] is True and end["samples"] == 4 and "time cap" in end["why"]
    assert real_time.perf_counter() > 0


def test_eager_bursts_leave_the_users_state_as_it_was(tmp_path, fake_cuda, capsys):
    """A failed capture: eager-only bursts on recorded sets. The step mutates an argument,
    module-level state and Python state, and prints: all of it is undone or silenced."""
    from launchprof.worker.plan import TargetRun
    from launchprof.worker.plan_bursts import run_plan_bursts

    acc = torch.zeros(4)
    counter = {"n": 0}

    def step(x, total):
        total.add_(x)
        counter["n"] += 1
        print("user print")
        return total * 2

    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="", repeat=10)
    run = TargetRun(step, "step", config, EventWriter(config.events_path))
    run.mutated_args = {"[1]"}
    run.host_writes = [(counter, "n")]
    x = torch.ones(4)
    run.eager_sets.append(((x, acc), {}))
    run_plan_bursts(run)
    assert torch.equal(acc, torch.zeros(4)) and counter["n"] == 0
    assert "user print" not in capsys.readouterr().out
    kinds = {e["kind"] for e in read(tmp_path / "e.jsonl") if e["type"] == "timing"}
    assert kinds == {"eager"}


def test_the_plan_samples_the_host_speed_between_its_bursts(tmp_path, fake_cuda, monkeypatch):
    """run_plan_bursts wires the sampler into the bursts: one sample per burst, one
    ``host-speed`` event after them, and the samples outside every timed call."""
    import time

    from launchprof.worker import plan_bursts
    from launchprof.worker.host_speed import HostSpeed

    def slow_loop(n: int) -> float:
        time.sleep(0.01)  # far longer than the step: inside a timed window it would show
        return 20.0 + 7.0 * n

    monkeypatch.setattr(plan_bursts, "cuda_host_speed", lambda: HostSpeed(slow_loop))
    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="", repeat=20)
    from launchprof.worker.plan import TargetRun

    run = TargetRun(lambda x: x * 2, "step", config, EventWriter(config.events_path))
    run.eager_sets.append(((torch.ones(4),), {}))
    plan_bursts.run_plan_bursts(run)
    log = read(tmp_path / "e.jsonl")
    speed = [e for e in log if e["type"] == "host-speed"]
    bursts = {e["burst"] for e in log if e["type"] == "timing"}
    assert len(speed) == 1 and speed[0]["when"] == "between the bursts"
    assert speed[0]["eager_op_us"] == pytest.approx(7.0) and len(speed[0]["samples_us"]["64"]) == len(bursts)
    walls = [w for e in log if e["type"] == "timing" for w in e["wall_us"]]
    assert walls and max(walls) < 5_000  # no 10 ms sample inside a timed call


def test_a_failing_burst_is_a_note_and_state_is_restored(tmp_path, fake_cuda):
    from launchprof.worker.plan import TargetRun
    from launchprof.worker.plan_bursts import run_plan_bursts

    acc = torch.zeros(2)
    calls = {"n": 0}

    def step(total):
        total.add_(1)
        calls["n"] += 1
        if calls["n"] > 3:
            raise ValueError("user bug in a burst")
        return total

    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="")
    run = TargetRun(step, "step", config, EventWriter(config.events_path))
    run.mutated_args = {"[0]"}
    run.eager_sets.append(((acc,), {}))
    run_plan_bursts(run)
    notes = [said(e) for e in read(tmp_path / "e.jsonl") if e["type"] == "note"]
    assert notes and "user bug in a burst" in notes[0] and "in-loop" in notes[0]
    assert torch.equal(acc, torch.zeros(2))


def test_the_host_speed_is_sampled_once_per_burst_and_its_median_holds_against_a_slow_spell(tmp_path, fake_cuda):
    """The worker samples the eager-op loop between bursts (``between``): the host drifts within
    seconds (H200: 7.1 µs per op in a process's calibration, 11.2 in one snapshot after its
    bursts), so the median over the bursts is its speed while the step was timed."""
    from launchprof.worker.host_speed import HostSpeed

    spells = iter([11.0, 11.0] + [7.0] * 20)  # a slow spell of two bursts, then the usual speed
    now = [7.0]
    speed = HostSpeed(lambda n: 20.0 + now[0] * n)

    def between() -> None:
        now[0] = next(spells)
        speed.sample()

    events = EventWriter(str(tmp_path / "e.jsonl"))
    run_bursts([Kind("eager", [lambda: None])], repeat=60, events=events, between=between)
    speed.write(events, "between the bursts")
    events.close()
    bursts, _ = schedule(60)
    assert len(speed.samples[64]) == len(speed.samples[256]) == bursts
    written = [e for e in read(tmp_path / "e.jsonl") if e["type"] == "host-speed"]
    assert len(written) == 1 and written[0]["when"] == "between the bursts"
    assert written[0]["eager_op_us"] == pytest.approx(7.0)


@pytest.mark.parametrize("step_ms, one_pass", [(2.0, True), (0.5, False)], ids=["long-step", "short-step"])
def test_a_long_step_takes_its_gpu_span_in_the_timed_calls_after_the_first_burst(tmp_path, fake_cuda, monkeypatch, step_ms, one_pass):
    """Each call of a second, event-timed pass doubles the bursts of a long step for an event
    cost under 0.5% of it: from the second burst on, a kind whose median reached
    ``ONE_PASS_US`` is called once per sample, its state put back once per block."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(burst.time, "perf_counter", lambda: next(ticks) * step_ms * 1e-3)  # each timed call: step_ms
    calls = {"eager": 0, "reset": 0}
    kinds = [Kind("eager", [lambda: calls.__setitem__("eager", calls["eager"] + 1)])]
    events = EventWriter(str(tmp_path / "e.jsonl"))
    run_bursts(kinds, repeat=40, events=events, reset=lambda: calls.__setitem__("reset", calls["reset"] + 1))
    bursts, per = schedule(40)
    timing = [e for e in read(tmp_path / "e.jsonl") if e["type"] == "timing"]
    assert [e["gpu_in_timed_calls"] for e in timing] == [False] + [one_pass] * (bursts - 1)
    later = bursts - 1 if one_pass else 0
    assert calls["eager"] == 1 + 2 * per * bursts - per * later  # one untimed call, then one or two per sample
    assert calls["reset"] == 1 + 2 * bursts - later
    assert all(len(e["gpu_us"]) == len(e["wall_us"]) == per and all(g > 0 for g in e["gpu_us"]) for e in timing)


def test_a_kind_that_changes_nothing_is_not_followed_by_a_put_back(tmp_path, fake_cuda):
    log: list[str] = []
    kinds = [Kind("eager", [lambda: log.append("e")]), Kind("clone", [lambda: log.append("c")], changes_state=False)]
    run_bursts(kinds, repeat=20, events=EventWriter(str(tmp_path / "e.jsonl")), reset=lambda: log.append("reset"))
    after = [log[i - 1] for i, what in enumerate(log) if what == "reset"]
    assert after and set(after) == {"e"}  # every put-back follows an eager call
    bursts, _ = schedule(20)
    assert log.count("reset") == 1 + 2 * bursts
