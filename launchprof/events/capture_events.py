"""Events of the captured graph: the capture itself, the memory it holds, the replays
checked against eager, the graph's nodes and edges, and the stream race check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchprof.events.record import Event, Site, omitted, written_when


def _ok(e: CaptureEvent) -> bool:
    return e.ok


def _failed(e: CaptureEvent) -> bool:
    return not e.ok


@dataclass(frozen=True, kw_only=True)
class HeldGraph(Site):
    """A name in the caller's code that holds a tensor with a ``grad_fn`` when capture fails:
    the autograd graph of an earlier call kept alive. The site is the line that binds it."""

    name: str | None = None  # `loss`, `losses`, `self.last`
    holder_kind: str | None = None  # "variable", "list", "dict", "attribute" ...
    scope: str | None = None  # "main()" or a module's name
    grad_fn: str | None = None  # the held tensor's grad_fn: NllLossBackward0


@dataclass(frozen=True, kw_only=True)
class OptimizerSeen(Site):
    """The optimizer a failed capture ran into; the site is the line that builds it, when found."""

    name: str | None = None  # its class: Adam
    variable: str | None = None  # the user's name for it
    capturable: bool | None = None  # every param group's capturable
    fused: bool | None = None
    accepts_fused: bool | None = None  # its class takes fused=True
    # This torch's GradScaler.step skips its host read of found_inf for an optimizer that
    # handles the scaling itself (fused=True): read from torch's source at the failure.
    scaler_skips_read_when_fused: bool | None = None


@dataclass(frozen=True, kw_only=True)
class CaptureEvent(Event, Site):
    """A capture that worked (its costs and graph) or failed (why, and the user's line)."""

    TYPE = "capture"
    ok: bool
    index: int | None = None
    capture_us: float | None = written_when(_ok)
    warmup_us: float | None = written_when(_ok)  # the 2 warm-up calls before capture
    instantiate_us: float | None = written_when(_ok)
    graph_nodes: int | None = written_when(_ok)
    node_types: dict[str, int] = written_when(_ok, default_factory=dict)
    pool_bytes: int | None = written_when(_ok)  # the graph's own increment
    workspace_bytes: int | None = written_when(_ok)  # one-time library workspaces
    # Argument paths copied into the static buffers: a call passed another tensor or address.
    moved_args: list[str] = field(default_factory=list)
    notes: list[str] = written_when(_ok, default_factory=list)
    kind: str | None = written_when(_failed)  # the hazard kind the failure reads as
    exception: str | None = written_when(_failed)
    message: str | None = written_when(_failed)
    cause: str | None = omitted()  # too little free memory, said in one line
    chain: list[str] = written_when(_failed, default_factory=list)
    cuda_errors: list[str] = written_when(_failed, default_factory=list)
    # What the capture's cause was read from (launchprof.common.capture_causes); absent in
    # runs recorded before the causes were read from these, whose ``kind`` stands as written.
    evidence: str | None = omitted()  # the rule of the cause table that matched
    warnings: list[str] | None = omitted()  # torch's warnings during the warm-up and capture
    frames: list[Site] | None = omitted()  # the first exception's frames, outermost first, launchprof's own left out
    held_graphs: list[HeldGraph] | None = omitted()
    optimizer: OptimizerSeen | None = omitted()


@dataclass(frozen=True, kw_only=True)
class MemoryEvent(Event):
    TYPE = "memory"
    free_bytes: int | None = None
    total_bytes: int | None = None
    static_bytes: int | None = None  # launchprof's static copies of inputs that are new tensors each call
    clone_bytes: int | None = None  # one clone of the outputs
    pool_bytes: int | None = None
    workspace_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class ValidationLeaf:
    """One output leaf of eager and replay compared."""

    path: str | None = None
    match: bool | None = None
    max_abs_diff: float | None = None
    why: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class ValidationEvent(Event):
    """Eager and replay of the same call, from the same state, compared leaf by leaf."""

    TYPE = "validation"
    index: int | None = None
    match: bool
    max_abs_diff: float | None = None
    worst: ValidationLeaf | None = None
    leaves: int | None = None
    changed_scalars: list[str] = field(default_factory=list)
    # Python numbers by argument path: the user's values, of whatever type they passed.
    scalars: dict[str, Any] = field(default_factory=dict)
    captured_scalars: dict[str, Any] = field(default_factory=dict)
    wall_us: float | None = None
    gpu_us: float | None = None


@dataclass(frozen=True, kw_only=True)
class GraphNodeRow:
    id: int
    type: str
    name: str | None = None  # the mangled kernel name, where the driver gave it


@dataclass(frozen=True, kw_only=True)
class AnatomyEvent(Event):
    """The captured graph's nodes and edges (``edges`` None: they could not be read)."""

    TYPE = "anatomy"
    node_count: int | None = None
    nodes: list[GraphNodeRow] = field(default_factory=list)
    edges: list[list[int]] | None = None


@dataclass(frozen=True, kw_only=True)
class RaceAccess(Site):
    """One side of an unordered pair of accesses: read or write, on which stream, by which op."""

    type: str | None = None
    stream: int | None = None
    op: str | None = None


@dataclass(frozen=True, kw_only=True)
class Race:
    data_ptr: int | None = None
    access: RaceAccess = field(default_factory=RaceAccess)  # the later of the two
    previous: RaceAccess = field(default_factory=RaceAccess)


@dataclass(frozen=True, kw_only=True)
class RaceOp:
    """An op that touched memory, with the earlier ops it reads after or overwrites."""

    op: str | None = None
    stream: int | None = None
    deps: list[int] = field(default_factory=list)


def _ran(e: RaceCheckEvent) -> bool:
    return e.origin_stream is not None


@dataclass(frozen=True, kw_only=True)
class RaceCheckEvent(Event):
    """The sanitizer pass: ``ok``, ``unavailable``, ``failed`` or ``skipped``."""

    TYPE = "race-check"
    status: str | None = None
    reason: str | None = None
    origin_stream: int | None = omitted()  # the calling stream's id; absent when the pass never started
    races: list[Race] = written_when(_ran, default_factory=list)
    ops: list[RaceOp] = written_when(_ran, default_factory=list)
    ops_total: int | None = written_when(_ran)
    # Ops that ran inside autograd's backward: its streams are autograd's to choose, so no
    # fork/join advice is given for them. Absent in runs recorded before it was counted.
    backward_ops: int | None = omitted()
