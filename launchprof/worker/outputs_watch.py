"""Outputs the user keeps past the next call, and state that loops back into it.

Under a hand-written CUDA graph every replay writes the same static output buffers, so an
output kept past the next replay silently changes under the user (the seed's "the
``.clone()`` is easy to forget"). launchprof hands the user clones, so the script stays
correct under analyze; this watch tells the user whether *their* graph code needs those
clones. It holds weak references to the tensors a few calls returned (calls 2-6, never
inside a timed region) and, one call later than the next, asks whether any is still alive
and held by the user's code: a container or variable in the caller's frames or a module's
globals, named through ``gc.get_referrers``. It also notices an argument that is the
previous call's output (the same tensor, or equal contents): state that loops back, whose
per-call copy into the static input a graph-aware step can avoid.

Events: ``outputs`` (once), ``kept-output`` and ``loop-back``; see docs/worker-events.md.
Everything here is launchprof's bookkeeping: a failure becomes a ``note``, never the
user's exception.
"""

from __future__ import annotations

import sys
import time
import weakref
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch

from launchprof.worker.event_writer import EventWriter
from launchprof.worker.frames import frame_site, is_internal
from launchprof.worker.graph_release import GraphOutputs
from launchprof.worker.observe import bind_arguments
from launchprof.worker.outputs_holders import Holder, find_holder, find_view_holder, keep_line, output_names
from launchprof.worker.trees import leaves
from launchprof.events.record import Site as EventSite
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import NoteCode
from launchprof.events.observation_events import KeptOutputEvent, LoopBackEvent, OutputRow, OutputsEvent

FIRST_CALL = 2  # call 0 and 1 are warm-up: lazy initialisation may keep things around
LAST_CALL = 6  # outputs of calls FIRST_CALL..LAST_CALL are watched
COPY_REPEATS = 20
MAX_COMPARE_BYTES = 64 << 20  # equal-contents comparison only for state of moderate size


@dataclass
class Returned:
    """One tensor a watched call returned: what the user received, weakly held."""

    path: str
    name: str
    ref: weakref.ref
    ident: int
    nbytes: int
    # The call returned (a view of) one of its own arguments, updated in place: that is
    # already the graph-friendly form, neither kept output nor looped-back copy.
    is_input: bool = False


@dataclass
class OutputsWatch:
    fn: Any
    events: EventWriter
    returned: dict[int, list[Returned]] = field(default_factory=dict)
    kept_seen: dict[tuple[str, str], int] = field(default_factory=dict)
    loop_seen: set[str] = field(default_factory=set)
    outputs_written: bool = False
    failed: bool = False
    checked: int = 0  # calls whose outputs were checked for keeping
    input_storages: set[int] = field(default_factory=set)  # of the call in progress
    graphs: GraphOutputs = field(default_factory=GraphOutputs)  # every call's outputs that hold an autograd graph

    # ---------------------------------------------------------------- the two hook calls
    def before(self, index: int, args: tuple, kwargs: dict, caller: FrameType | None) -> None:
        """At the entry of call ``index``: outputs of call index-2 still held are kept past
        call index-1; arguments that are call index-1's outputs loop back."""
        if self.failed or index < FIRST_CALL or index > LAST_CALL + 2:
            return
        self._guard(self._before, index, args, kwargs, caller)

    def after(self, index: int, out: Any, caller: FrameType | None) -> None:
        """When call ``index`` returns ``out`` to the user: hold its tensors weakly."""
        self.graphs.note(out)
        if self.failed or not FIRST_CALL <= index <= LAST_CALL:
            return
        self._guard(self._after, index, out, caller)

    def _guard(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # launchprof's own bookkeeping must never fail the user's call
            self.failed = True
            self.events.write(NoteEvent(code=NoteCode.OUTPUT_WATCH_STOPPED, params={"error": f"{type(exc).__name__}: {exc}"}))

    # ---------------------------------------------------------------- internals
    def _after(self, index: int, out: Any, caller: FrameType | None) -> None:
        site = frame_site(caller)
        names = output_names(site.code if site else "")
        found = []
        for path, leaf in leaves(out):
            if isinstance(leaf, torch.Tensor):
                nbytes = leaf.numel() * leaf.element_size()
                mine = _storage_of(leaf) in self.input_storages
                found.append(Returned(path, names.get(path) or f"output{path}", weakref.ref(leaf), id(leaf), nbytes, mine))
        self.returned[index] = found
        if not self.outputs_written:
            self.outputs_written = True
            self.events.write(OutputsEvent(index=index, outputs=[OutputRow(path=r.path, name=r.name, bytes=r.nbytes) for r in found]))

    def _before(self, index: int, args: tuple, kwargs: dict, caller: FrameType | None) -> None:
        self.input_storages = {_storage_of(t) for _, t in leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        previous = [r for r in self.returned.get(index - 1, []) if not r.is_input]
        if previous:
            self._loop_back(index, previous, args, kwargs, caller)
        older = [r for r in self.returned.pop(index - 2, []) if not r.is_input]
        if older:
            self._kept(index - 2, older, caller)

    def _loop_back(self, index: int, previous: list[Returned], args: tuple, kwargs: dict, caller: FrameType | None) -> None:
        for name, value in bind_arguments(self.fn, args, kwargs).items():
            for path, leaf in leaves(value, name):
                if not isinstance(leaf, torch.Tensor) or path in self.loop_seen:
                    continue
                match = _same_state(leaf, previous)
                if match is None:
                    continue
                source, how = match
                self.loop_seen.add(path)
                site = frame_site(caller)
                self.events.write(
                    LoopBackEvent(
                        index=index,
                        argument=path,
                        output=source.path,
                        output_name=source.name,
                        how=how,
                        bytes=source.nbytes,
                        copy_us=copy_us(leaf),
                        site=site,
                    )
                )

    def _kept(self, index: int, older: list[Returned], caller: FrameType | None) -> None:
        frames = user_frames(caller)
        call_site = frame_site(caller)
        self.checked += 1
        for r in older:
            tensor = r.ref()
            if tensor is None:
                continue
            holder, view = find_holder(tensor, frames), False
            if holder is None:
                holder, view = find_view_holder(tensor, frames), True
            del tensor
            if holder is None:
                continue
            key = (holder.name, r.path)
            self.kept_seen[key] = self.kept_seen.get(key, 0) + 1
            self.events.write(_kept_event(index, r, holder, call_site, self.kept_seen[key], view))


def _kept_event(index: int, r: Returned, holder: Holder, call_site: Any, count: int, view: bool) -> KeptOutputEvent:
    where = keep_line(holder, call_site.line if call_site else None)
    return KeptOutputEvent(
        index=index,
        output=r.path,
        output_name=r.name,
        bytes=r.nbytes,
        holder=holder.name,
        holder_kind=holder.kind,
        holder_scope=holder.scope,
        where=EventSite(**where),
        call_site=call_site,
        count=count,
        view=view,
    )


def _same_state(arg: torch.Tensor, previous: list[Returned]) -> tuple[Returned, str] | None:
    """The previous output this argument is: the same tensor, else one with equal contents."""
    for r in previous:
        if r.ident == id(arg) and r.ref() is arg:
            return r, "same-object"
    for r in previous:
        out = r.ref()
        if out is None or out.shape != arg.shape or out.dtype != arg.dtype or out.device != arg.device:
            continue
        if r.nbytes > MAX_COMPARE_BYTES:
            continue
        if out.data_ptr() == arg.data_ptr() or (torch.equal(out, arg) and not _constant(arg)):
            return r, "equal-contents"
    return None


def _storage_of(t: torch.Tensor) -> int:
    try:
        return int(t.untyped_storage().data_ptr())
    except (RuntimeError, TypeError):
        return id(t)


def _constant(t: torch.Tensor) -> bool:
    """All elements equal (zeros, a fresh ``full``): equal contents would be a coincidence."""
    flat = t.reshape(-1)
    return flat.numel() < 2 or bool((flat == flat[0]).all())


def copy_us(tensor: torch.Tensor) -> float | None:
    """Time copying this tensor into a static buffer of its own size, as launchprof's
    copy-in does (``copy_(..., non_blocking=True)``), averaged over a few copies."""
    try:
        scratch = torch.empty_like(tensor)
        cuda = tensor.is_cuda
        scratch.copy_(tensor, non_blocking=True)
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(COPY_REPEATS):
            scratch.copy_(tensor, non_blocking=True)
        if cuda:
            torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e6 / COPY_REPEATS
    except (RuntimeError, TypeError):
        return None


def user_frames(frame: FrameType | None) -> list[FrameType]:
    """The user's frames from ``frame`` outwards (launchprof's, torch's, the stdlib's skipped)."""
    out = []
    while frame is not None:
        if not is_internal(frame.f_code.co_filename):
            out.append(frame)
        frame = frame.f_back
    return out


def caller_frame() -> FrameType | None:
    """The frame that called the target's wrapper (the innermost frame outside launchprof)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame
