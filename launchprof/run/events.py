"""The worker's events (docs/worker-events.md) as tolerant, validated models.

One model per event type, each checking the fields the analysis reads and keeping any
others (``extra="allow"``): the worker adds fields freely, and an event type this
launchprof does not know is skipped, never an error. A known event whose fields have the
wrong type (a ``wall_us`` that is a string) is an error: :func:`validate_events` names it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Event(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: str
    t: float | None = None


class MachineEvent(Event):
    machine: dict[str, Any] = {}


class TargetEvent(Event):
    name: str | None = None
    file: str | None = None
    line: int | None = None


class SiteEvent(Event):
    file: str | None = None
    line: int | None = None
    code: str | None = None


class CallEvent(Event):
    index: int
    phase: str | None = None
    args: list[dict[str, Any]] = []


class LoopTimingEvent(Event):
    """``eager-timing`` / ``replay-timing``: a call the script made, timed in its loop."""

    wall_us: float
    gpu_us: float | None = None
    phase: str | None = None


class TimingEvent(Event):
    """``timing``: one burst of the user's step timed back to back (the reported numbers)."""

    kind: str  # eager, replay, clone
    mode: str = "burst"
    burst: int | None = None
    wall_us: list[float]
    gpu_us: list[float | None] = []


class TimingEndEvent(Event):
    kind: str
    samples: int | None = None
    seconds: float | None = None
    stopped_early: bool = False
    why: str | None = None


class CaptureEvent(Event):
    ok: bool
    index: int | None = None
    capture_us: float | None = None
    warmup_us: float | None = None
    instantiate_us: float | None = None
    graph_nodes: int | None = None
    node_types: dict[str, int] = {}
    pool_bytes: int | None = None
    workspace_bytes: int | None = None


class MemoryEvent(Event):
    free_bytes: int | None = None
    total_bytes: int | None = None
    static_bytes: int | None = None
    clone_bytes: int | None = None
    pool_bytes: int | None = None
    workspace_bytes: int | None = None


class ValidationEvent(Event):
    index: int | None = None
    match: bool
    max_abs_diff: float | None = None


class TraceEvent(Event):
    what: str = "eager"
    path: str
    calls: int | None = None


class CalibrationEvent(Event):
    status: str
    path: str | None = None
    seconds: float | None = None
    message: str | None = None


class ScriptEndEvent(Event):
    status: str | None = None
    exit_code: int | None = None
    calls: int | None = None


class NamesEvent(Event):
    names: list[str] = []


class RankEvent(Event):
    """``rank``: a worker started by torch's launcher (--nproc-per-node), first of its events."""

    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    pid: int | None = None
    pgid: int | None = None


MODELS: dict[str, type[Event]] = {
    "rank": RankEvent,
    "machine": MachineEvent,
    "target": TargetEvent,
    "call-site": SiteEvent,
    "call": CallEvent,
    "eager-timing": LoopTimingEvent,
    "replay-timing": LoopTimingEvent,
    "timing": TimingEvent,
    "timing-end": TimingEndEvent,
    "capture": CaptureEvent,
    "memory": MemoryEvent,
    "validation": ValidationEvent,
    "trace": TraceEvent,
    "calibration": CalibrationEvent,
    "script-end": ScriptEndEvent,
    "state-realloc": NamesEvent,
    **{name: Event for name in ("environment", "target-problem", "mutations", "probe", "fallback", "phase", "host-speed")},
    **{name: Event for name in ("plan-end", "worker-end", "note", "internal-error", "candidates", "timing-start")},
    **{name: Event for name in ("anatomy", "race-check")},
    **{name: Event for name in ("outputs", "kept-output", "loop-back")},
    **{name: Event for name in ("bucket-plan", "bucket-measure", "bucket-check", "bucket-leak", "bucket-end")},
    **{name: Event for name in ("compile", "compile-start")},
}


def validate_events(events: list[Any]) -> list[dict[str, Any]]:
    """Known events, checked; unknown types dropped. ValueError names the first bad one."""
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(events, start=1):
        if not isinstance(raw, dict):
            raise ValueError(f"event {number} is not an object")
        model = MODELS.get(str(raw.get("type")))
        if model is None:
            continue
        try:
            checked = model.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ValueError(f"event {number} ({raw.get('type')}) field {where}: {err['msg']}") from None
        out.append(checked.model_dump(exclude_none=False))
    return out
