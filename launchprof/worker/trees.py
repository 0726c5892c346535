"""Walking nested call arguments: tuples, lists, dicts, dataclasses, named tuples.

Graph capture needs every tensor the target reads at a fixed address, wherever it sits in
the arguments. These helpers name each leaf by its path (``batch['ids']``, ``xs[2]``), copy
a structure with fresh tensors (the static buffers), and copy new data into it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import torch


def _children(obj: Any) -> list[tuple[str, Any]] | None:
    """Named children of a container, or None for a leaf."""
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return [(f".{name}", getattr(obj, name)) for name in obj._fields]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f".{f.name}", getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return None


def leaves(obj: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Yield ``(path, leaf)`` for every leaf, depth-first, in a stable order."""
    children = _children(obj) if depth < 16 else None
    if children is None:
        yield path, obj
        return
    for name, child in children:
        yield from leaves(child, path + name, depth + 1)


def map_tree(obj: Any, fn: Callable[[Any], Any], depth: int = 0) -> Any:
    """Rebuild ``obj`` with ``fn`` applied to every leaf."""
    if depth >= 16:
        return fn(obj)
    if isinstance(obj, dict):
        items = [(k, map_tree(v, fn, depth + 1)) for k, v in obj.items()]
        try:
            return type(obj)(items)
        except TypeError:
            return dict(items)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(map_tree(v, fn, depth + 1) for v in obj))
    if isinstance(obj, (list, tuple)):
        mapped = [map_tree(v, fn, depth + 1) for v in obj]
        return type(obj)(mapped) if type(obj) in (list, tuple) else mapped
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: map_tree(getattr(obj, f.name), fn, depth + 1) for f in dataclasses.fields(obj) if f.init}
        return dataclasses.replace(obj, **changes)
    return fn(obj)


def tensor_leaves(obj: Any) -> list[tuple[str, torch.Tensor]]:
    return [(p, v) for p, v in leaves(obj) if isinstance(v, torch.Tensor)]


def clone_tensors(obj: Any) -> Any:
    """A copy of ``obj`` whose tensors are new allocations with the same data."""
    return map_tree(obj, lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v)


def copy_into(static: Any, new: Any) -> None:
    """Copy every tensor leaf of ``new`` into the same leaf of ``static`` (same structure)."""
    for (_, dst), (_, src) in zip(tensor_leaves(static), tensor_leaves(new), strict=True):
        if dst.data_ptr() != src.data_ptr():
            dst.copy_(src, non_blocking=True)


def flat_tensors(obj: Any, out: list[torch.Tensor] | None = None, depth: int = 0) -> list[torch.Tensor]:
    """Tensor leaves in the order of :func:`leaves`, without building path names (hot path)."""
    if out is None:
        out = []
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif depth >= 16:
        return out
    elif isinstance(obj, dict):
        for v in obj.values():
            flat_tensors(v, out, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            flat_tensors(v, out, depth + 1)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            flat_tensors(getattr(obj, f.name), out, depth + 1)
    return out
