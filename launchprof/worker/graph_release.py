"""Outputs of earlier calls that keep their autograd graph alive, and releasing them.

A training step's loss returned to a loop that keeps it (``loss = step(x, y)``, read after
the loop) holds that call's whole autograd graph until the next call's result replaces it.
While any graph holds them, the parameters' AccumulateGrad nodes stay cached with the
stream they first ran on, so the next backward, run under capture, reuses nodes bound to
the default stream and capture fails (cudaErrorStreamCaptureImplicit; newer torch names
the stale node). ``del loss`` in the caller is the fix. For the measurement only,
launchprof detaches those outputs in place: their values stay (a later ``loss.item()``
still reads them), their graph goes, and the capture is tried again. The report says so
and labels every figure measured after it.
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch

from launchprof.events.record import Site
from launchprof.events.training_events import ReleasedTensor
from launchprof.worker.outputs_holders import find_holder, keep_line
from launchprof.worker.trees import leaves

MAX_WATCHED = 10_000  # outputs with a graph a loop may keep (a list of every loss)


@dataclass
class GraphOutputs:
    """Weak references to the tensors the target returned with a ``grad_fn``: the only
    tensors launchprof may detach (never an argument, never the user's own tensors)."""

    refs: list[weakref.ref] = field(default_factory=list)
    released: bool = False  # a release was needed once: a later capture releases again

    def note(self, out: Any) -> None:
        """After a call returned ``out`` to the user; never raises into the user's call."""
        try:
            found = [weakref.ref(t) for _, t in leaves(out) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        except Exception:
            return
        if found or self.refs:
            self.refs = [r for r in self.refs if r() is not None][-MAX_WATCHED:] + found

    def alive(self, exclude: set[int]) -> list[torch.Tensor]:
        """The returned tensors still alive with their graph, less those in ``exclude`` (ids)."""
        out = []
        for ref in self.refs:
            t = ref()
            if t is not None and t.grad_fn is not None and id(t) not in exclude:
                out.append(t)
        return out


def _released(t: torch.Tensor, frames: list[FrameType], near: int | None) -> ReleasedTensor:
    holder = find_holder(t, frames)
    where = Site(**keep_line(holder, near)) if holder is not None else None
    row = dict(
        name=holder.name if holder else None, holder_kind=holder.kind if holder else None, scope=holder.scope if holder else None,
        where=where, grad_fn=type(t.grad_fn).__name__, bytes=t.numel() * t.element_size(),
    )  # fmt: skip
    try:
        t.detach_()
    except RuntimeError as exc:  # a view cannot be detached in place
        return ReleasedTensor(**row, released=False, error=f"{type(exc).__name__}: {str(exc)[:200]}")
    return ReleasedTensor(**row, released=True)


def release(outputs: GraphOutputs, frames: list[FrameType], near: int | None, exclude: set[int]) -> list[ReleasedTensor]:
    """Detach every returned tensor still holding its graph, naming who keeps it; then
    collect, so the nodes only cycles held go too."""
    rows = [_released(t, frames, near) for t in outputs.alive(exclude)]
    outputs.released = outputs.released or any(r.released for r in rows)
    gc.collect()
    return rows


def release_again(outputs: GraphOutputs, exclude: set[int] | None = None) -> int:
    """Before a later capture of the same step (bucket sizes): the caller keeps each new
    eager call's output as it kept the first. Only where a release was needed before."""
    if not outputs.released:
        return 0
    count = 0
    for t in outputs.alive(exclude or set()):
        try:
            t.detach_()
            count += 1
        except RuntimeError:
            continue
    gc.collect()
    return count
