"""The report contract (DESIGN.md "Report contract", ``schema_version: 1``).

The JSON report is the session file: every other format renders from it, and
``report`` and ``compare`` read it back. Field names here are a contract; fields may
be added, never renamed. Dataclasses are frozen because a report is a measured fact.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchprof.errors import UsageError

SCHEMA_VERSION = 1

VERDICTS = ("graphs-help", "marginal", "graphs-dont-help", "not-capturable", "eager-only")
# `lint` writes the same report shape with mode "lint" and this verdict: nothing was measured.
STATIC_VERDICT = "static-only"
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Stats:
    median: float
    p10: float
    p90: float
    n: int


@dataclass(frozen=True)
class Machine:
    gpu: str | None
    driver: str | None
    cuda: str | None
    torch: str | None
    python: str


@dataclass(frozen=True)
class Hazard:
    kind: str
    severity: str
    message: str
    file: str | None
    line: int | None
    hint: str
    source: str = "runtime"  # "runtime" (measured) or "static" (lint)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EagerProfile:
    step_us: Stats | None
    kernels_per_step: int | None
    gpu_busy_us: float | None
    gpu_idle_fraction: float | None
    launch_gap_us: Stats | None
    launch_api_us: float | None = None  # host time in cudaLaunchKernel & co per step
    gpu_span_us: Stats | None = None  # CUDA-event time from first to last kernel
    memcpys_per_step: int | None = None
    kernel_us: Stats | None = None  # duration of one kernel


@dataclass(frozen=True)
class ReplayProfile:
    step_us: Stats | None
    graph_nodes: int | None
    instantiate_us: float | None
    pool_bytes: int | None
    capture_us: float | None = None
    node_types: dict[str, int] = field(default_factory=dict)
    gpu_span_us: Stats | None = None


@dataclass(frozen=True)
class Speedup:
    median: float
    low: float
    high: float


@dataclass(frozen=True)
class Validation:
    calls_compared: int
    matches: int
    max_abs_diff: float | None


@dataclass(frozen=True)
class Bucket:
    """One recommended capture size for an argument whose shape varies."""

    argument: str
    dim: int
    sizes: list[int]
    padding_waste: float  # mean fraction of padded (wasted) work over the observed calls
    pool_bytes_estimate: int | None


@dataclass(frozen=True)
class KernelSpan:
    """One GPU activity in a timeline, relative to the start of its call."""

    name: str
    start_us: float
    dur_us: float
    kind: str = "kernel"  # kernel, memcpy, memset


@dataclass(frozen=True)
class Timeline:
    """One eager call and one replay of the same step, for the HTML timeline."""

    eager: list[KernelSpan]
    replay: list[KernelSpan]


@dataclass(frozen=True)
class RunInfo:
    """How the measurement run went: complete or not, and why it stopped."""

    complete: bool
    cause: str | None  # one line; None when the run completed
    script_exit: int | None
    target_calls: int
    wall_s: float | None
    phases_s: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    schema_version: int
    launchprof_version: str
    created: str
    machine: Machine
    script: str
    target: str | None
    verdict: str
    eager: EagerProfile | None
    replay: ReplayProfile | None
    speedup: Speedup | None
    breakeven_replays: float | None
    predicted_speedup: float | None
    validation: Validation | None
    hazards: list[Hazard]
    buckets: list[Bucket] | None
    run: RunInfo | None = None
    notes: list[str] = field(default_factory=list)
    mode: str = "analyze"  # "analyze" or "lint"
    timeline: Timeline | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise UsageError(
                f"session schema_version {version!r} is not supported by this launchprof "
                f"(it reads version {SCHEMA_VERSION}); re-run analyze or upgrade launchprof"
            )
        try:
            return _build(cls, data)
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"session file is not a launchprof report: {exc}") from None


def _build(cls: type, data: Any) -> Any:
    """Build a (nested) dataclass from plain JSON data, tolerant of added fields."""
    if data is None:
        return None
    hints = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for name, f in hints.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                raise KeyError(f"missing field {name!r}")
            continue
        kwargs[name] = _convert(f.type, data[name])
    return cls(**kwargs)


_NESTED: dict[str, type] = {}


def _convert(type_name: Any, value: Any) -> Any:
    text = str(type_name)
    for name, nested in _NESTED.items():
        if text.startswith(f"list[{name}]"):
            return [_build(nested, v) for v in value] if value is not None else None
        if text == name or text.startswith(f"{name} |") or text.startswith(f"{name}|"):
            return _build(nested, value) if value is not None else None
    return value


_NESTED.update(
    {
        "Stats": Stats,
        "Machine": Machine,
        "Hazard": Hazard,
        "EagerProfile": EagerProfile,
        "ReplayProfile": ReplayProfile,
        "Speedup": Speedup,
        "Validation": Validation,
        "Bucket": Bucket,
        "RunInfo": RunInfo,
        "KernelSpan": KernelSpan,
        "Timeline": Timeline,
    }
)


def load_report(path: str | Path) -> Report:
    """Read a session file; a missing, truncated or foreign file is a usage error (exit 2)."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"session file not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{p} is not a text JSON file") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{p} is not valid JSON (truncated?): {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p} is not a launchprof report (top level is not an object)")
    return Report.from_dict(data)
