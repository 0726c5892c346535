"""Memory arithmetic around capture and the calibration hook, on CPU with small fakes."""

from __future__ import annotations

import json
import sys
import types

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker import memory  # noqa: E402
from launchprof.worker.calibration import calibrate  # noqa: E402
from launchprof.worker.event_writer import EventWriter

MIB = 2**20


def test_first_pool_splits_into_the_graphs_own_bytes_and_the_one_time_workspace():
    assert memory.split_pool(34 * MIB, 2 * MIB) == (2 * MIB, 32 * MIB)
    assert memory.split_pool(34 * MIB, None) == (34 * MIB, None)  # second capture failed
    assert memory.split_pool(2 * MIB, 3 * MIB) == (3 * MIB, 0)  # never negative


def test_low_memory_gives_a_one_line_cause(monkeypatch):
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (100 * MIB, 80_000 * MIB))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda *a: 30 * MIB)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda *a: 10 * MIB)
    assert memory.room_for_capture(50 * MIB) is None  # 120 MiB available >= 50 + 64
    cause = memory.room_for_capture(60 * MIB)
    assert cause is not None and "\n" not in cause and "120 MiB free" in cause and "124 MiB" in cause


def _events(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_calibration_is_skipped_when_the_module_is_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "launchprof.crossover.calibrate", None)  # import fails
    result = calibrate({"gpu": "x"}, EventWriter(str(tmp_path / "e.jsonl")))
    assert result["status"] == "skipped"
    assert _events(tmp_path / "e.jsonl")[-1]["type"] == "calibration"


def test_calibration_result_and_progress_are_events(tmp_path, monkeypatch):
    module = types.ModuleType("launchprof.crossover.calibrate")

    def ensure_profile(machine, progress):
        progress("launch costs", 0.5)
        return {"status": "measured", "path": "/p.json", "seconds": 8.5, "message": "measured this GPU"}

    module.ensure_profile = ensure_profile
    monkeypatch.setitem(sys.modules, "launchprof.crossover.calibrate", module)
    calibrate({"gpu": "x"}, EventWriter(str(tmp_path / "e.jsonl")))
    log = _events(tmp_path / "e.jsonl")
    assert [e["type"] for e in log] == ["calibration-progress", "calibration"]
    assert log[0]["fraction"] == 0.5
    assert log[1]["status"] == "measured" and log[1]["path"] == "/p.json" and log[1]["seconds"] == 8.5


def test_a_failing_calibration_never_stops_the_run(tmp_path, monkeypatch):
    module = types.ModuleType("launchprof.crossover.calibrate")

    def ensure_profile(machine, progress):
        raise RuntimeError("no spin kernel")

    module.ensure_profile = ensure_profile
    monkeypatch.setitem(sys.modules, "launchprof.crossover.calibrate", module)
    result = calibrate({}, EventWriter(str(tmp_path / "e.jsonl")))
    assert result["status"] == "failed" and "no spin kernel" in result["message"]
