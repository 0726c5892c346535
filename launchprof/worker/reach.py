"""Everything a step can reach besides its return value: the objects its extra calls could
change, found by a bounded walk from its roots (the globals and closure cells it names,
its bound ``self``, its arguments).

The walk follows plain objects (``__dict__`` and ``__slots__``), lists, tuples, dicts, sets
and deques, modules (``nn.Module``: parameters with their ``.grad``, buffers, submodules
and every other attribute) and optimizers (their ``state`` and ``param_groups`` are plain
dicts and lists). It stops at what cannot hold the step's state or cannot be copied:

- immutable values (numbers, strings, ``None``, dtypes, enums): the holder that points at
  one is saved, so putting the holder back puts the value back;
- code and namespaces (Python modules, classes, functions): not the step's data;
- the outside world (files, loggers, threads, locks, queues, sockets, CUDA streams and
  events): what a step writes to them is a host side effect (the probe's finding), not
  state its next call reads, and rewinding their attributes would corrupt them; and
  immutable library values (compiled patterns, dates);
- objects whose state lives in C (an extension type without ``__dict__``), generators and
  iterators: recorded as not covered (``Uncovered``); a generator is watched, so that one
  the extra calls advanced is known to have changed.

The walk is bounded (``Budget``): objects past the limit, and the elements of containers
too long to walk, are recorded as not covered too, so the report can say so.
"""

from __future__ import annotations

import collections
import enum
import functools
import numbers
import random
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

# Immutable leaves: the holder pointing at one is what is saved.
_ATOMS: tuple[type, ...] = (
    type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), type(NotImplemented),
    enum.Enum, numbers.Number, frozenset, torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Size,
    torch.finfo, torch.iinfo,
)  # fmt: skip
# Code and namespaces: not data of the step.
_CODE: tuple[type, ...] = (
    types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType,
    types.FrameType, types.TracebackType, types.MethodWrapperType, types.WrapperDescriptorType,
    types.MethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType, types.MappingProxyType,
    property, staticmethod, classmethod,
)  # fmt: skip
# Top-level packages whose objects are the outside world (module of the object's type).
_OUTSIDE = frozenset(
    {"logging", "threading", "_thread", "io", "_io", "socket", "ssl", "multiprocessing", "queue", "asyncio",
     "concurrent", "subprocess", "selectors", "tempfile", "sqlite3", "weakref", "_weakref", "_weakrefset",
     "contextvars", "inspect", "ast", "importlib", "argparse", "pathlib", "tkinter", "warnings", "typing",
     "re", "datetime", "operator"}
)  # fmt: skip
# Streams and events: handles of the device's queues, not data.
_CUDA_HANDLES: tuple[type, ...] = tuple(t for t in (torch.cuda.Stream, torch.cuda.Event, getattr(torch, "Stream", None), getattr(torch, "Event", None)) if isinstance(t, type))
GENERATORS: tuple[type, ...] = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
_PLAIN: frozenset[type] = frozenset({dict, list, set, tuple, bytearray, collections.deque, collections.defaultdict})
# Module attributes that are not state a step changes: hook tables hold functions.
_MODULE_SKIP = ("hook",)


@dataclass(frozen=True)
class Budget:
    """Limits of one walk: objects visited, elements of one container walked, depth."""

    objects: int = 50_000
    items: int = 10_000
    depth: int = 32


@dataclass(frozen=True)
class Uncovered:
    """Something reachable whose state launchprof cannot save: where, what, and why
    (``opaque``: kept in C; ``generator``; ``iterator``; ``budget``: past the walk's limit;
    ``long``: a container too long to walk, with mutable elements)."""

    path: str
    type: str
    why: str


@dataclass
class Reached:
    """What one walk found, each object once, named by the first path that reached it."""

    tensors: list[tuple[str, torch.Tensor]] = field(default_factory=list)
    holders: list[tuple[str, Any, str]] = field(default_factory=list)  # (path, object, kind: hoststate.KINDS)
    rngs: list[tuple[str, Any]] = field(default_factory=list)
    arrays: list[tuple[str, Any]] = field(default_factory=list)  # numpy arrays
    watched: list[tuple[str, Any]] = field(default_factory=list)  # generators, iterators: changes seen, not undone
    uncovered: list[Uncovered] = field(default_factory=list)
    objects: int = 0


def type_name(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ not in ("builtins", None) else t.__qualname__


def is_atom(obj: Any) -> bool:
    if isinstance(obj, _ATOMS):
        return not isinstance(obj, torch.Tensor)
    np = _numpy()
    return np is not None and isinstance(obj, np.dtype)


def _outside(obj: Any) -> bool:
    if isinstance(obj, _CODE) or isinstance(obj, _CUDA_HANDLES):
        return True
    top = (type(obj).__module__ or "").partition(".")[0]
    return top in _OUTSIDE


def _numpy() -> Any:
    return sys.modules.get("numpy")


def is_rng(obj: Any) -> bool:
    """Generators with a state to read and set: torch's, ``random.Random``, numpy's."""
    if isinstance(obj, (torch.Generator, random.Random)):
        return True
    np = _numpy()
    return np is not None and isinstance(obj, (np.random.Generator, np.random.RandomState))


def slot_names(obj: Any) -> list[str]:
    names: list[str] = []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return names


class _Walk:
    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.out = Reached()
        self.seen: set[int] = set()
        self.stack: list[tuple[str, Any, int]] = []

    def push(self, path: str, obj: Any, depth: int) -> None:
        if is_atom(obj) or id(obj) in self.seen:
            return
        self.stack.append((path, obj, depth))

    def run(self, roots: Iterable[tuple[str, Any]]) -> Reached:
        for name, value in reversed(list(roots)):
            self.push(name, value, 0)
        while self.stack:
            path, obj, depth = self.stack.pop()
            if id(obj) in self.seen:
                continue
            if self.out.objects >= self.budget.objects:
                self.out.uncovered.append(Uncovered(path, type_name(obj), "budget"))
                continue
            self.seen.add(id(obj))
            self.out.objects += 1
            self.visit(path, obj, depth)
        return self.out

    def visit(self, path: str, obj: Any, depth: int) -> None:
        out = self.out
        if isinstance(obj, torch.Tensor):
            out.tensors.append((path, obj))
            if obj.is_leaf and obj.requires_grad:  # .grad of a non-leaf is never kept, and reading it warns
                out.holders.append((path, obj, "grad"))
                if obj.grad is not None:
                    self.push(f"{path}.grad", obj.grad, depth + 1)
            return
        if _outside(obj):
            return
        if is_rng(obj):
            out.rngs.append((path, obj))
        elif isinstance(obj, GENERATORS):
            out.watched.append((path, obj))
            out.uncovered.append(Uncovered(path, type_name(obj), "generator"))
            return
        np = _numpy()
        if np is not None and isinstance(obj, np.ndarray):
            out.arrays.append((path, obj))
            return
        if depth >= self.budget.depth:
            out.uncovered.append(Uncovered(path, type_name(obj), "budget"))
            return
        found = self.containers(path, obj, depth)
        if type(obj) not in _PLAIN:  # a subclass of a container may have attributes of its own
            found = self.attributes(path, obj, depth) or found
        if not found and not is_rng(obj):
            iterator = hasattr(type(obj), "__next__")
            if iterator:
                out.watched.append((path, obj))
            out.uncovered.append(Uncovered(path, type_name(obj), "iterator" if iterator else "opaque"))

    def containers(self, path: str, obj: Any, depth: int) -> bool:
        """Lists, dicts, sets, deques (their contents are saved) and tuples (walked only)."""
        if isinstance(obj, bytearray):
            self.out.holders.append((path, obj, "bytes"))
            return True
        kind = container_kind(obj)
        if kind is None:
            return False
        if kind:
            self.out.holders.append((path, obj, kind))
        if len(obj) > self.budget.items:
            values = list(obj.items()) if isinstance(obj, dict) else [(None, v) for v in obj]
            if not all(is_atom(k) and is_atom(v) for k, v in values):
                self.out.uncovered.append(Uncovered(path, type_name(obj), "long"))
            return True
        if isinstance(obj, dict):
            items = [(_key_path(path, k, i), k, v) for i, (k, v) in enumerate(list(obj.items()))]
        else:
            items = [(f"{path}[{i}]", None, v) for i, v in enumerate(list(obj))]
        for child, key, value in reversed(items):
            if key is not None and not is_atom(key):
                self.push(f"{child}<key>", key, depth + 1)
            self.push(child, value, depth + 1)
        return True

    def attributes(self, path: str, obj: Any, depth: int) -> bool:
        """``__dict__`` and ``__slots__`` of any other object; a module's hook tables are
        left out (they hold functions)."""
        found = False
        attrs = getattr(obj, "__dict__", None)
        children: list[tuple[str, Any]] = []
        if isinstance(attrs, dict):
            found = True
            self.out.holders.append((path, obj, "attrs"))
            module = isinstance(obj, torch.nn.Module)
            for name, value in list(attrs.items()):
                if module and any(s in name for s in _MODULE_SKIP):
                    continue
                children.append((_attr_path(path, name, module), value))
        slots = slot_names(obj)
        if slots:
            found = True
            self.out.holders.append((path, obj, "slots"))
            children += [(f"{path}.{name}", getattr(obj, name)) for name in slots if hasattr(obj, name)]
        if isinstance(obj, functools.partial):  # what it was made with: partial(step, cache)
            children += [(f"{path}.args", obj.args), (f"{path}.keywords", obj.keywords)]
        for child, value in reversed(children):
            self.push(child, value, depth + 1)
        return found


def container_kind(obj: Any) -> str | None:
    """The holder kind of a container (``""``: a tuple, walked but not saved), or None."""
    if isinstance(obj, dict):
        return "dict"
    if isinstance(obj, list):
        return "list"
    if isinstance(obj, collections.deque):
        return "deque"
    if isinstance(obj, set):
        return "set"
    return "" if isinstance(obj, tuple) else None


def _attr_path(path: str, name: str, module: bool) -> str:
    """``model.0.weight`` rather than ``model._modules['0']._parameters['weight']``: a
    module's tables are named the way ``named_parameters`` names their entries."""
    if module and name in ("_parameters", "_buffers", "_modules"):
        return f"{path}<{name}>"
    return f"{path}.{name}"


def _key_path(path: str, key: Any, index: int) -> str:
    for table in ("<_parameters>", "<_buffers>", "<_modules>"):
        if path.endswith(table):
            return f"{path[: -len(table)]}.{key}"
    if isinstance(key, (str, int, float, bool)) or key is None:
        text = repr(key)
        return f"{path}[{text if len(text) <= 40 else text[:37] + '...'}]"
    return f"{path}[#{index}]"


def reach(roots: Iterable[tuple[str, Any]], budget: Budget | None = None) -> Reached:
    """Walk from ``roots`` ((name, value) pairs), depth first; each object once."""
    return _Walk(budget or Budget()).run(roots)
