"""The plan's profiled replay (worker/plan_profiles.py) on CPU: the profiler is torch's own
(CPU activity only here), the graph replay a stand-in. What is checked: the user's state
is put back whatever the replay does, and the trace event names the replay trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker import plan_profiles  # noqa: E402
from launchprof.worker.event_writer import EventWriter


class _Snap:
    def __init__(self) -> None:
        self.restored = 0

    def restore(self) -> None:
        self.restored += 1


class _Run:
    def __init__(self, tmp: Path, fail: bool) -> None:
        self.tmp, self.fail = tmp, fail
        self.events = EventWriter(str(tmp / "e.jsonl"))
        self.profiled_replay = False
        self.snap = _Snap()
        self.replays = 0

    def run_dir(self) -> Path:
        return self.tmp

    def run_graph(self, args: tuple, kwargs: dict) -> None:
        self.replays += 1
        if self.fail:
            raise RuntimeError("replay failed")
        torch.ones(4).add_(1)


@pytest.fixture(autouse=True)
def _saved_state(monkeypatch):
    """The run's save and put-back (worker/plan_state.py) as the fake run's snapshot."""
    monkeypatch.setattr(plan_profiles, "save", lambda run, sets: run.snap)
    monkeypatch.setattr(plan_profiles, "put_back", lambda run, snap, after: snap.restore())


def _events(tmp: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp / "e.jsonl").read_text().splitlines() if line.strip()]


def test_one_profiled_replay_writes_its_trace_and_puts_the_state_back(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    run = _Run(tmp_path, fail=False)
    plan_profiles.profile_replay(run, (), {})
    run.events.close()
    assert run.profiled_replay and run.replays == 1 and run.snap.restored == 1
    traces = [e for e in _events(tmp_path) if e["type"] == "trace"]
    assert traces == [{**traces[0], "path": "trace-replay.json.gz", "calls": 1, "what": "replay"}]
    assert (tmp_path / "trace-replay.json.gz").is_file()


def test_a_failed_replay_still_puts_the_state_back_and_writes_no_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    run = _Run(tmp_path, fail=True)
    with pytest.raises(RuntimeError, match="replay failed"):
        plan_profiles.profile_replay(run, (), {})
    run.events.close()
    assert run.profiled_replay and run.snap.restored == 1  # not tried again
    assert not [e for e in _events(tmp_path) if e["type"] == "trace"]
