"""What the worker observed of the user's calls: their arguments, what the step mutates,
what the probe call ran into, the calls served eagerly, and outputs kept or looped back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchprof.events.record import Event, Site, omitted, written_when


def _holds_value(leaf: ArgLeaf) -> bool:
    return leaf.kind in ("scalar", "const")


@dataclass(frozen=True, kw_only=True)
class ArgLeaf:
    """One leaf of a call's arguments, named by its path (``x``, ``batch['ids']``)."""

    path: str | None = None
    kind: str | None = None  # tensor, scalar, const, generator, object, module
    shape: list[int] | None = omitted()
    dtype: str | None = omitted()
    device: str | None = omitted()
    ptr: int | None = omitted()
    bytes: int | None = omitted()
    requires_grad: bool | None = omitted()
    type: str | None = omitted()
    value: Any = written_when(_holds_value)  # the user's Python value (scalar, const)


@dataclass(frozen=True, kw_only=True)
class CallEvent(Event):
    TYPE = "call"
    index: int
    phase: str | None = None
    args: list[ArgLeaf] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class MutationsEvent(Event):
    """Argument paths and state names the warm-up calls changed in place."""

    TYPE = "mutations"
    args: list[str] = field(default_factory=list)
    state: list[str] = field(default_factory=list)
    # A warm-up call advanced the default CUDA generator (None: a worker that did not say).
    cuda_rng: bool | None = omitted()


@dataclass(frozen=True, kw_only=True)
class StateReallocEvent(Event):
    TYPE = "state-realloc"
    index: int | None = None
    names: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class FallbackEvent(Event):
    """A call the graph could not serve, run eagerly."""

    TYPE = "fallback"
    index: int | None = None
    reason: str | None = None  # shape, scalar, input moved after capture, host-state (a replay would skip the step's Python state or a replay differed)
    changed: list[str] | None = omitted()  # the Python numbers that changed (reason scalar)


@dataclass(frozen=True, kw_only=True)
class OpSequenceEvent(Event):
    """The aten ops one profile-phase call ran, where no profiler runs on it: ``digest`` is
    the sha1 of their names in order, joined by newlines. Calls whose digests differ take
    different paths through the step (the eager calls are then profiled after the plan)."""

    TYPE = "op-sequence"
    index: int
    count: int
    digest: str


@dataclass(frozen=True, kw_only=True)
class ProbeEntry(Site):
    """One thing the probe call ran into at a user line: a sync, a side effect, a random
    draw, or a stream operation (``op`` with the streams and events it names)."""

    op: str | None = omitted()
    what: str | None = omitted()
    kind: str | None = omitted()
    message: str | None = omitted()
    source: str | None = omitted()
    count: int | None = omitted()
    waiter: int | None = omitted()
    waited: int | None = omitted()
    event: int | None = omitted()
    stream: int | None = omitted()
    origin: int | None = omitted()
    # The frame inside an installed package where it happened, when the entry's own site is
    # the user's line that called into that package (runs recorded before had none).
    library_site: Site | None = omitted()


@dataclass(frozen=True, kw_only=True)
class ProbeEvent(Event):
    TYPE = "probe"
    index: int | None = None
    syncs: list[ProbeEntry] = field(default_factory=list)
    effects: list[ProbeEntry] = field(default_factory=list)
    rng: list[ProbeEntry] = field(default_factory=list)
    streams: list[ProbeEntry] = field(default_factory=list)
    functions: list[Site] = field(default_factory=list)  # the user functions the call ran


@dataclass(frozen=True, kw_only=True)
class OutputRow:
    path: str | None = None  # in what the target returns: "" for a lone tensor, "[0]"
    name: str | None = None  # from the call site's assignment
    bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class OutputsEvent(Event):
    TYPE = "outputs"
    index: int | None = None
    outputs: list[OutputRow] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class KeptOutputEvent(Event):
    """An output the user still holds past the next call."""

    TYPE = "kept-output"
    index: int | None = None
    output: str | None = None
    output_name: str | None = None
    bytes: int | None = None
    holder: str | None = None
    holder_kind: str | None = None
    holder_scope: str | None = None
    where: Site | None = None  # the line that stores into the holder
    call_site: Site | None = None
    count: int | None = None
    view: bool | None = None


@dataclass(frozen=True, kw_only=True)
class LoopBackEvent(Event):
    """An argument that is the previous call's output: state looping back."""

    TYPE = "loop-back"
    index: int | None = None
    argument: str | None = None
    output: str | None = None
    output_name: str | None = None
    how: str | None = None  # same-object, equal-contents
    bytes: int | None = None
    copy_us: float | None = None
    site: Site | None = None
