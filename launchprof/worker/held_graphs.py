"""Names in the caller's code that keep an earlier call's autograd graph alive.

A training step that returns ``loss`` with its ``grad_fn`` leaves the caller holding that
call's autograd graph until the name is rebound. The graph's ``AccumulateGrad`` nodes are
shared with the next call (one per parameter, while any graph refers to it) and still
carry the stream they ran on, the default stream: a capture that runs backward then waits
on it and fails. When a capture fails, the caller's variables, containers of tensors and
module globals are searched for tensors with a ``grad_fn`` whose graph reaches a leaf
(an ``AccumulateGrad`` node); each is named with the line that binds it
(:func:`launchprof.worker.outputs_holders.keep_line`), where the fix goes.
"""

from __future__ import annotations

import collections
import itertools
from types import FrameType
from typing import Any

import torch

from launchprof.events.capture_events import HeldGraph
from launchprof.worker.outputs_holders import Holder, keep_line, scopes_of

MAX_HELD = 8  # names reported
MAX_ITEMS = 64  # items looked at per container (the newest, at its end)
MAX_NODES = 20000  # autograd nodes walked per tensor looking for a leaf; more counts as reaching one


def graph_tensor(value: Any) -> torch.Tensor | None:
    """``value`` when it is a tensor holding a graph, else the last such item of a list,
    tuple, deque or dict's values; None otherwise."""
    if isinstance(value, torch.Tensor):
        return value if value.grad_fn is not None else None
    if isinstance(value, (list, tuple)):
        newest: Any = reversed(value[-MAX_ITEMS:])
    elif isinstance(value, dict):
        newest = itertools.islice(reversed(value.values()), MAX_ITEMS)
    elif isinstance(value, collections.deque):
        newest = itertools.islice(reversed(value), MAX_ITEMS)
    else:
        return None
    return next((item for item in newest if isinstance(item, torch.Tensor) and item.grad_fn is not None), None)


def reaches_leaf(tensor: torch.Tensor) -> bool:
    """Whether the tensor's graph reaches an ``AccumulateGrad`` node (a parameter's)."""
    seen: set[int] = set()
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        if len(seen) >= MAX_NODES:
            return True
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            return True
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    return False


def held_graphs(frames: list[FrameType], near: int | None) -> list[HeldGraph]:
    """The names in the user's ``frames`` (innermost first) and their modules that hold a
    tensor whose autograd graph reaches a parameter; ``near`` is the call's line, where a
    variable bound by the call itself is found first."""
    out: list[HeldGraph] = []
    seen: set[int] = set()
    for scope in scopes_of(frames):
        for name, value in list(scope.names.items()):
            if name.startswith("__") or len(out) >= MAX_HELD:
                continue
            tensor = graph_tensor(value)
            if tensor is None or id(tensor) in seen or not reaches_leaf(tensor):
                continue
            seen.add(id(tensor))
            kind = "variable" if isinstance(value, torch.Tensor) else type(value).__name__
            where = keep_line(Holder(name, kind, scope.label, scope.file, scope.first, scope.last), near)
            grad_fn = type(tensor.grad_fn).__name__
            out.append(HeldGraph(name=name, holder_kind=kind, scope=scope.label, grad_fn=grad_fn, **where))
    return out
