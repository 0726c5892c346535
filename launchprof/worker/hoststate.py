"""Python state a step can change (attributes of objects, contents of lists, dicts, sets and
deques, a parameter's ``.grad``), saved before the extra calls launchprof makes and put
back after them: a step counter, a cache's ``is_initialized`` flag, a list of per-layer
tensors all read as the script left them.

Each holder is saved shallowly and by identity: the attribute that pointed at a tensor or
an object points at that same one again (whose own contents are saved as holders of their
own, or as tensors by worker/saved_state.py); an immutable value (a number, a string) is
put back with its holder. Restoring writes straight into ``__dict__`` and the containers,
past ``__setattr__`` (``nn.Module``'s would file a tensor under its parameters), and only
where something changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from launchprof.worker.reach import container_kind, slot_names

_MISSING = object()
KINDS = ("dict", "list", "deque", "set", "bytes", "attrs", "slots", "grad", "key")  # key: obj is (owner, name)


def save_holder(obj: Any, kind: str) -> Any:
    """A shallow copy of what ``obj`` holds (``kind``: one of ``KINDS``)."""
    if kind == "dict":
        return dict(obj)
    if kind in ("list", "deque"):
        return list(obj)
    if kind == "set":
        return set(obj)
    if kind == "bytes":
        return bytes(obj)
    if kind == "attrs":
        return dict(vars(obj))
    if kind == "slots":
        return {name: getattr(obj, name, _MISSING) for name in slot_names(obj)}
    if kind == "grad":
        return obj.grad
    if kind == "key":
        owner, name = obj
        return owner.get(name, _MISSING) if isinstance(owner, dict) else getattr(owner, name, _MISSING)
    raise ValueError(kind)


def _same_items(now: dict, saved: dict) -> bool:
    return now.keys() == saved.keys() and all(now[k] is v for k, v in saved.items())


def changed(obj: Any, kind: str, saved: Any) -> bool:
    """Whether ``obj`` no longer holds what was saved (by identity)."""
    if kind in ("dict", "attrs"):
        return not _same_items(obj if kind == "dict" else vars(obj), saved)
    if kind in ("list", "deque"):
        return len(obj) != len(saved) or any(a is not b for a, b in zip(obj, saved, strict=True))
    if kind == "set":
        return obj != saved
    if kind == "bytes":
        return bytes(obj) != saved
    if kind == "slots":
        return any(getattr(obj, name, _MISSING) is not value for name, value in saved.items())
    if kind == "key":
        return save_holder(obj, kind) is not saved
    return obj.grad is not saved


def _put_items(live: dict, saved: dict) -> None:
    for key in [k for k in live if k not in saved]:
        del live[key]
    for key, value in saved.items():
        if live.get(key, _MISSING) is not value:
            live[key] = value


def restore_holder(obj: Any, kind: str, saved: Any) -> None:
    if kind == "dict":
        if list(obj.keys()) != list(saved.keys()):  # an order changed too (a dict is ordered)
            obj.clear()
        _put_items(obj, saved)
    elif kind == "attrs":
        _put_items(vars(obj), saved)
    elif kind == "list":
        obj[:] = saved
    elif kind == "deque":
        obj.clear()
        obj.extend(saved)
    elif kind == "set":
        obj.clear()
        obj.update(saved)
    elif kind == "bytes":
        obj[:] = saved
    elif kind == "slots":
        for name, value in saved.items():
            if value is _MISSING:
                if hasattr(obj, name):
                    object.__delattr__(obj, name)
            else:
                object.__setattr__(obj, name, value)
    elif kind == "key":
        _put_key(*obj, saved)
    else:
        obj.grad = saved


def _put_key(owner: Any, name: str, value: Any) -> None:
    if isinstance(owner, dict):
        if value is _MISSING:
            owner.pop(name, None)
        else:
            owner[name] = value
    elif value is _MISSING:
        if hasattr(owner, name):
            delattr(owner, name)
    else:
        setattr(owner, name, value)


@dataclass
class HostState:
    """Saved holders; ``restore`` puts back those that changed and returns the paths of the
    ones that could not be put back, with the error."""

    holders: list[tuple[str, Any, str, Any]] = field(default_factory=list)  # (path, object, kind, saved)
    unsaved: list[tuple[str, str]] = field(default_factory=list)  # (path, error)

    @classmethod
    def of(cls, holders: Iterable[tuple[str, Any, str]]) -> HostState:
        state = cls()
        for path, obj, kind in holders:
            try:
                state.holders.append((path, obj, kind, save_holder(obj, kind)))
            except Exception as exc:  # a container whose iteration raises: said, not fatal
                state.unsaved.append((path, f"{type(exc).__name__}: {exc}"[:200]))
        return state

    @classmethod
    def save(cls, writes: list[tuple[Any, str]], containers: list[Any]) -> HostState:
        """The probe's finds: (owner, key) writes (an owner is a dict of globals or an
        object; only the key written is put back, with the contents of a container it
        held) and containers the step appended to."""
        holders: list[tuple[str, Any, str]] = []
        seen: set[int] = set()
        for owner, key in writes:
            holders.append((f"<written {key}>", (owner, key), "key"))
            try:
                value = save_holder((owner, key), "key")
            except Exception:  # a property that raises: HostState.of says so for the key itself
                continue
            if container_kind(value) and id(value) not in seen:
                seen.add(id(value))
                holders.append((f"<written {key}>", value, container_kind(value)))
        for c in containers:
            kind = container_kind(c)
            if kind and id(c) not in seen:  # a tuple ("") holds nothing to put back
                seen.add(id(c))
                holders.append(("<appended>", c, kind))
        return cls.of(holders)

    def restore(self) -> list[tuple[str, str]]:
        failed: list[tuple[str, str]] = []
        for path, obj, kind, saved in self.holders:
            try:
                if changed(obj, kind, saved):
                    restore_holder(obj, kind, saved)
            except Exception as exc:
                failed.append((path, f"{type(exc).__name__}: {exc}"[:200]))
        return failed

    def changed_paths(self) -> list[str]:
        return [path for path, obj, kind, saved in self.holders if _safe_changed(obj, kind, saved)]


def _safe_changed(obj: Any, kind: str, saved: Any) -> bool:
    try:
        return changed(obj, kind, saved)
    except Exception:
        return True
