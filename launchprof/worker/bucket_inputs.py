"""Inputs for the bucket measurement: the recorded calls, padded to a capture size.

A capture size's graph reads static buffers of that size along the varying dimension.
Before each replay the call's real rows are copied in and the rest is zeroed (the padding);
after it, outputs are sliced back to the call's size. Everything the timed loop does is
prepared here beforehand, so the loop holds only the copies, the replay and the slicing
a user's own plan would do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from launchprof.worker.observe import bind_arguments
from launchprof.worker.trees import leaves, map_tree, tensor_leaves


@dataclass
class CallSet:
    """One call's arguments and its size along the varying dimension."""

    args: tuple
    kwargs: dict
    size: int
    derived: bool = False  # sliced or tiled from a recorded call, not one the script made


def named_leaves(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    """Every argument leaf by the path the ``call`` events use (``tokens``, ``batch['ids']``)."""
    out: dict[str, Any] = {}
    for name, value in bind_arguments(fn, args, kwargs).items():
        if isinstance(value, torch.nn.Module):
            continue
        for path, leaf in leaves(value, name):
            out[path] = leaf
    return out


def replace_leaves(args: tuple, kwargs: dict, new: dict[int, torch.Tensor]) -> tuple[tuple, dict]:
    """The same structure with the tensors whose id is in ``new`` swapped."""

    def swap(v: Any) -> Any:
        return new.get(id(v), v) if isinstance(v, torch.Tensor) else v

    return map_tree(args, swap), {k: map_tree(v, swap) for k, v in kwargs.items()}


def observed_history(events_path: str) -> tuple[dict[str, list[tuple[int, ...]]], int]:
    """Tensor shapes per argument path from this run's ``call`` events, and the call count."""
    history: dict[str, list[tuple[int, ...]]] = {}
    calls = 0
    with open(events_path, encoding="utf-8") as fh:
        for line in fh:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") != "call":
                continue
            calls += 1
            for leaf in event.get("args", []):
                if leaf.get("kind") == "tensor":
                    history.setdefault(leaf["path"], []).append(tuple(leaf.get("shape") or ()))
    return history, calls


def recorded_sets(fn: Callable[..., Any], sets: list[tuple[tuple, dict]], axis: list[tuple[str, int]]) -> list[CallSet]:
    """The plan's recorded argument sets that carry the varying arguments, once each."""
    out, seen = [], set()
    path, dim = axis[0]
    for args, kwargs in sets:
        leaf = named_leaves(fn, args, kwargs).get(path)
        if isinstance(leaf, torch.Tensor) and leaf.dim() > dim and id(args) not in seen:
            seen.add(id(args))
            out.append(CallSet(args, kwargs, int(leaf.shape[dim])))
    return out


def resized(t: torch.Tensor, dim: int, n: int) -> torch.Tensor:
    """A new tensor of ``n`` rows along ``dim`` made of ``t``'s rows (cut, or repeated)."""
    m = int(t.shape[dim])
    if m == 0:
        shape = list(t.shape)
        shape[dim] = n
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    reps = -(-n // m)
    src = torch.cat([t] * reps, dim) if reps > 1 else t
    return src.narrow(dim, 0, n).clone()


def derived_set(fn: Callable[..., Any], base: CallSet, axis: list[tuple[str, int]], n: int) -> CallSet:
    """A call of size ``n`` built from a recorded one: the varying arguments cut or
    repeated to ``n`` rows, everything else as recorded."""
    named = named_leaves(fn, base.args, base.kwargs)
    new = {id(named[p]): resized(named[p], d, n) for p, d in axis if isinstance(named.get(p), torch.Tensor)}
    args, kwargs = replace_leaves(base.args, base.kwargs, new)
    return CallSet(args, kwargs, n, derived=True)


def padded_set(fn: Callable[..., Any], call: CallSet, axis: list[tuple[str, int]], size: int) -> CallSet:
    """``call`` with its varying arguments zero-padded to ``size`` rows (new tensors)."""
    named = named_leaves(fn, call.args, call.kwargs)
    new = {}
    for p, d in axis:
        t = named.get(p)
        if isinstance(t, torch.Tensor):
            shape = list(t.shape)
            shape[d] = size
            buf = torch.zeros(shape, dtype=t.dtype, device=t.device)
            buf.narrow(d, 0, min(call.size, size)).copy_(t.narrow(d, 0, min(call.size, size)))
            new[id(t)] = buf
    args, kwargs = replace_leaves(call.args, call.kwargs, new)
    return CallSet(args, kwargs, size, derived=True)


class Padder:
    """One capture size's static inputs: the padded buffers the graph reads, and the
    copy-in for a call (real rows in, padding zeroed)."""

    def __init__(self, fn: Callable[..., Any], base: CallSet, axis: list[tuple[str, int]], moved: list[str], size: int) -> None:
        self.fn, self.size, self.dims = fn, size, dict(axis)
        static = padded_set(fn, base, axis, size)
        named = named_leaves(fn, static.args, static.kwargs)
        copies = {id(named[p]): named[p].clone() for p in moved if isinstance(named.get(p), torch.Tensor) and p not in self.dims}
        self.args, self.kwargs = replace_leaves(static.args, static.kwargs, copies)
        named = named_leaves(fn, self.args, self.kwargs)
        self.static = {p: named[p] for p in [*self.dims, *moved] if isinstance(named.get(p), torch.Tensor)}

    def copy_in(self, call: CallSet) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """(destination, source) pairs for ``call``; a None source zeroes the padding."""
        named = named_leaves(self.fn, call.args, call.kwargs)
        pairs: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        for p, dst in self.static.items():
            src = named[p]
            dim = self.dims.get(p)
            if dim is None:
                pairs.append((dst, src))
                continue
            n = int(src.shape[dim])
            pairs.append((dst.narrow(dim, 0, n), src))
            if n < self.size:
                pairs.append((dst.narrow(dim, n, self.size - n), None))
        return pairs


def run_pairs(pairs: list[tuple[torch.Tensor, torch.Tensor | None]]) -> None:
    for dst, src in pairs:
        if src is None:
            dst.zero_()
        else:
            dst.copy_(src, non_blocking=True)


def output_dims(out: Any, size: int, other: Any = None, other_size: int | None = None) -> list[int | None]:
    """Per output tensor, the dimension that follows the padded size (None: none does, as
    for a reduction over the batch). Another size's outputs break ties (a dim of 1)."""
    mine = [t for _, t in tensor_leaves(out)]
    theirs = [t for _, t in tensor_leaves(other)] if other is not None else []
    dims: list[int | None] = []
    for i, t in enumerate(mine):
        found = [d for d in range(t.dim()) if t.shape[d] == size]
        if other_size is not None and i < len(theirs) and theirs[i].dim() == t.dim():
            found = [d for d in found if theirs[i].shape[d] == other_size]
        dims.append(found[0] if found else None)
    return dims


def sliced(out: Any, dims: list[int | None], n: int) -> Any:
    """The outputs cut back to the call's ``n`` rows (views of the static outputs)."""
    it = iter(dims)

    def cut(v: Any) -> Any:
        if not isinstance(v, torch.Tensor):
            return v
        d = next(it, None)
        return v if d is None else v.narrow(d, 0, n)

    return map_tree(out, cut)
