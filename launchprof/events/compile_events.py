"""``--compare compile`` events (worker/compile_compare.py): a mode begins, and what it did."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from launchprof.events.record import Event


@dataclass(frozen=True, kw_only=True)
class CompileStartEvent(Event):
    TYPE = "compile-start"
    mode: str | None = None
    timeout_s: float | None = None
    round: int | None = None  # from 1; older runs: absent


@dataclass(frozen=True, kw_only=True)
class CompileLog:
    """One of torch's log records while compiling (graph breaks, cudagraph skips, recompiles)."""

    logger: str | None = None
    level: str | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class CompileEvent(Event):
    """One mode and round of torch.compile: its outcome, costs, logs and counters."""

    TYPE = "compile"
    mode: str | None = None  # reduce-overhead, default
    # The burst kind of its timed calls (a name the event has always used: it shadows
    # dataclasses.field in this class body, hence the module-qualified calls below).
    field: str | None = None
    status: str | None = None  # ok, failed, timeout
    round: int | None = None
    error: str | None = None
    compile_s: float | None = None
    warmup_calls: int | None = None
    passes: int | None = None
    kernels_per_step: int | None = None
    graph_launches: int | None = None
    cudagraphs_used: bool | None = None
    frames_in_timing: int | None = None  # frames dynamo compiled during the timed calls
    device: str | None = None
    logs: list[CompileLog] = dataclasses.field(default_factory=list)
    # torch._dynamo.utils.counters after the mode: group -> counter -> count.
    counters: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
