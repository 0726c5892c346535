"""The worker's event records end to end: what EventWriter puts on a line is what the run's
reader gives back, fields of one outcome stay off the other's lines, and the records load
in the worker without pydantic."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.events import RECORDS, Event, Site
from launchprof.events.bucket_events import BucketMeasureEvent
from launchprof.events.capture_events import CaptureEvent, HeldGraph, OptimizerSeen, Race, RaceAccess, RaceCheckEvent, RaceOp, ValidationEvent, ValidationLeaf
from launchprof.events.lifecycle_events import ScriptEndEvent, ScriptException
from launchprof.events.observation_events import ArgLeaf, CallEvent, ProbeEntry, ProbeEvent
from launchprof.events.timing_events import TimingEvent
from launchprof.events.compile_events import CompileEvent, CompileLog
from launchprof.run.event_log import validate_events
from launchprof.worker.event_writer import EventWriter

RECORDED = [
    ScriptEndEvent(status="exception", exit_code=1, exception=ScriptException(type="ValueError", message="bad", file="s.py", line=3), calls=2),
    CaptureEvent(ok=True, index=4, capture_us=10.0, graph_nodes=3, node_types={"kernel": 3}, pool_bytes=512, moved_args=["[0]"], notes=["n"]),
    CaptureEvent(ok=False, index=4, kind="hidden-sync", exception="RuntimeError", message="m", chain=["RuntimeError: m"], file="s.py", line=9, code="x.item()"),
    ValidationEvent(index=5, match=False, max_abs_diff=0.5, worst=ValidationLeaf(path="output", match=False, max_abs_diff=0.5), leaves=1, scalars={"n": 3}),
    CallEvent(index=0, phase="eager", args=[ArgLeaf(path="x", kind="tensor", shape=[2, 3], dtype="float32", bytes=24), ArgLeaf(path="flag", kind="const", type="NoneType", value=None)]),
    ProbeEvent(index=2, syncs=[ProbeEntry(op="aten::item", kind="hidden-sync", file="s.py", line=7, code="y.item()", function="step")], functions=[Site(file="s.py", line=1, function="step")]),
    RaceCheckEvent(status="ok", origin_stream=7, races=[Race(data_ptr=1, access=RaceAccess(type="read", stream=7, line=4), previous=RaceAccess(type="write", stream=9, line=3))], ops_total=0),
    TimingEvent(kind="eager", burst=0, wall_us=[1.0, 2.0], gpu_us=[0.5, None]),
    BucketMeasureEvent(stage="shared", size=8, capture_ms=1.5, replay_us=20.0, added_bytes=64, pool_total_bytes=128),
    CompileEvent(mode="default", field="compile-no-cudagraphs", status="ok", round=1, logs=[CompileLog(logger="l", level="DEBUG", message="m")], counters={"frames": {"total": 1}}),
    CaptureEvent(
        ok=False, index=4, kind="kept-autograd-graph", evidence="stale-stream", exception="RuntimeError", message="m", chain=["RuntimeError: m"],
        warnings=["w"], frames=[Site(file="s.py", line=9, function="step", code="loss.backward()")],
        held_graphs=[HeldGraph(name="loss", holder_kind="variable", scope="main()", grad_fn="MseLossBackward0", file="s.py", line=20, code="loss = step(x)")],
        optimizer=OptimizerSeen(name="Adam", variable="opt", capturable=False, fused=False, accepts_fused=True, scaler_skips_read_when_fused=True, file="s.py", line=3),
        file="s.py", line=9, code="loss.backward()",
    ),
    RaceCheckEvent(status="ok", origin_stream=7, ops=[RaceOp(op="aten.mm.default", stream=7, deps=[])], ops_total=1, backward_ops=1),
]


def _written(tmp_path: Path, *records: Event) -> list[dict]:
    writer = EventWriter(str(tmp_path / "events.jsonl"))
    for record in records:
        writer.write(record)
    writer.close()
    return [json.loads(line) for line in (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("record", RECORDED, ids=lambda r: r.TYPE)
def test_a_written_record_reads_back_as_itself(tmp_path: Path, record: Event) -> None:
    [line] = _written(tmp_path, record)
    assert line["type"] == record.TYPE and isinstance(line["t"], float)
    [read] = validate_events([line])
    assert read == dataclasses.replace(record, t=line["t"])


def test_each_outcome_writes_only_its_own_fields(tmp_path: Path) -> None:
    ok, failed, const, oom, shared = _written(
        tmp_path,
        RECORDED[1],
        RECORDED[2],
        CallEvent(index=0, args=[ArgLeaf(path="flag", kind="const", type="NoneType", value=None)]),
        BucketMeasureEvent(stage="private", size=4, pool_bytes=None, error="out of memory"),
        RECORDED[8],
    )
    assert "workspace_bytes" in ok and ok["workspace_bytes"] is None  # a success says null when unknown
    assert not {"kind", "exception", "message", "chain", "cuda_errors", "file", "cause"} & set(ok)
    assert not {"evidence", "warnings", "frames", "held_graphs", "optimizer"} & (set(ok) | set(failed))  # facts only where read
    assert not {"capture_us", "node_types", "pool_bytes", "notes"} & set(failed)
    assert failed["file"] == "s.py" and "function" not in failed and "cause" not in failed
    assert const["args"] == [{"path": "flag", "kind": "const", "type": "NoneType", "value": None}]
    assert oom == {"type": "bucket-measure", "t": oom["t"], "stage": "private", "size": 4, "pool_bytes": None, "error": "out of memory"}
    assert "pool_bytes" not in shared and "error" not in shared


def test_the_reader_keeps_its_tolerance() -> None:
    lines = [
        {"type": "a-type-from-a-newer-worker", "x": 1},
        {"type": "timing", "kind": "eager", "wall_us": [1.0], "added_later": {"x": 1}},
    ]
    [timing] = validate_events(lines)
    assert timing == TimingEvent(kind="eager", wall_us=[1.0])  # unknown type dropped, extra field ignored
    with pytest.raises(ValueError, match=r"event 1 \(timing\) field wall_us\.0"):
        validate_events([{"type": "timing", "kind": "eager", "wall_us": ["fast"]}])


def test_every_record_has_its_own_type() -> None:
    assert all(cls.TYPE == name and dataclasses.is_dataclass(cls) for name, cls in RECORDS.items())
    assert {"machine", "call", "probe", "capture", "timing", "bucket-end", "compile", "race-check"} <= set(RECORDS)


def test_the_worker_loads_its_records_without_pydantic() -> None:
    code = "import sys, launchprof.events, launchprof.worker.event_writer; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
