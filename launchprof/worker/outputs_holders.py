"""Who keeps a tensor alive: the user's variable, container or attribute, by name.

A live weak reference alone does not prove the user keeps an output (torch preserves a
tensor's Python object while a view of it lives; launchprof's own argument records hold
tensors too). A holder counts only when it can be named from the user's code: a variable
in one of the user's frames or modules, a list/dict/deque/set/tuple bound to such a name
(through ``gc.get_referrers``, up to two containers deep: ``outs.append((logits, h))``), or
an attribute of an object whose class the user wrote. Then the line that stores into it
(``history.append(...)``) is found in the source of that scope: the fix goes there.
"""

from __future__ import annotations

import ast
import collections
import gc
import inspect
import linecache
import os
import re
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from launchprof.worker.frames import is_internal

CONTAINERS = (list, dict, tuple, set, collections.deque)


@dataclass(frozen=True)
class Scope:
    label: str  # "__main__" (a module) or "main()" (a function)
    names: dict[str, Any]
    file: str
    first: int  # line range of the scope's source, for finding the storing line
    last: int


@dataclass(frozen=True)
class Holder:
    name: str  # `history`, or `cache.last` / `self.last` for an attribute
    kind: str  # "list", "dict", "deque", "set", "tuple", "variable", "attribute"
    scope: str
    file: str
    first: int
    last: int
    attribute: bool = False
    # Further (file, first, last) ranges to search for the storing line: an attribute is
    # stored to from the user's frames as often as from its class.
    more: tuple[tuple[str, int, int], ...] = ()


def scopes_of(frames: list[FrameType]) -> list[Scope]:
    """Locals of each user frame (innermost first), then the modules' globals."""
    out: list[Scope] = []
    seen: set[int] = set()
    for frame in frames:
        code = frame.f_code
        file = code.co_filename
        if frame.f_locals is not frame.f_globals and id(frame.f_locals) not in seen:
            seen.add(id(frame.f_locals))
            lines = [line for _, _, line in code.co_lines() if line]
            out.append(Scope(f"{code.co_name}()", frame.f_locals, file, code.co_firstlineno, max(lines, default=code.co_firstlineno)))
    for frame in frames:
        if id(frame.f_globals) not in seen:
            seen.add(id(frame.f_globals))
            module = str(frame.f_globals.get("__name__", "?"))
            out.append(Scope(module, frame.f_globals, frame.f_globals.get("__file__") or frame.f_code.co_filename, 1, 10**9))
    return out


def _named(obj: Any, scopes: list[Scope]) -> tuple[str, Scope] | None:
    for scope in scopes:
        for name, value in list(scope.names.items()):
            if value is obj and not name.startswith("__"):
                return name, scope
    return None


def _user_attribute(obj: Any, ref: Any) -> tuple[str, Any] | None:
    """``(attribute, owner)`` when ``ref`` is an object of a class the user wrote, or its
    ``__dict__`` (Python 3.11+ keeps instance attributes inline: the object itself refers)."""
    owners = [o for o in gc.get_referrers(ref) if getattr(o, "__dict__", None) is ref] if isinstance(ref, dict) else [ref]
    for owner in owners:
        if isinstance(owner, (type, FrameType, *CONTAINERS)) or not hasattr(owner, "__dict__"):
            continue
        try:
            source = inspect.getsourcefile(type(owner))
        except TypeError:
            continue
        if source is None or is_internal(source):
            continue
        for key, value in vars(owner).items():
            if value is obj:
                return str(key), owner
    return None


def _holder_of_container(container: Any, scopes: list[Scope], depth: int) -> Holder | None:
    named = _named(container, scopes)
    kind = type(container).__name__
    if named is not None:
        name, scope = named
        return Holder(name, kind, scope.label, scope.file, scope.first, scope.last)
    if depth >= 2:
        return None
    for ref in gc.get_referrers(container):
        if isinstance(ref, dict) and any(ref is s.names for s in scopes):
            continue
        attr = _user_attribute(container, ref)
        if attr is not None:
            return _attribute_holder(attr[0], attr[1], kind, scopes)
        if isinstance(ref, CONTAINERS):
            found = _holder_of_container(ref, scopes, depth + 1)
            if found is not None:
                return found
    return None


def _attribute_holder(name: str, owner: Any, kind: str, scopes: list[Scope]) -> Holder:
    file = inspect.getsourcefile(type(owner)) or ""
    try:
        lines, first = inspect.getsourcelines(type(owner))
    except (OSError, TypeError):
        lines, first = [], 1
    named = _named(owner, scopes)
    full = f"{named[0]}.{name}" if named else f"self.{name}"
    ranges = tuple((sc.file, sc.first, sc.last) for sc in scopes)
    return Holder(full, kind, type(owner).__qualname__, file, first, first + len(lines), attribute=True, more=ranges)


def find_holder(tensor: Any, frames: list[FrameType]) -> Holder | None:
    """The user's name that keeps ``tensor`` alive, or None when none can be named."""
    scopes = scopes_of(frames)
    named = _named(tensor, scopes)
    if named is not None:
        name, scope = named
        return Holder(name, "variable", scope.label, scope.file, scope.first, scope.last)
    for ref in gc.get_referrers(tensor):
        if isinstance(ref, dict) and any(ref is s.names for s in scopes):
            continue
        attr = _user_attribute(tensor, ref)
        if attr is not None:
            return _attribute_holder(attr[0], attr[1], "attribute", scopes)
        if isinstance(ref, CONTAINERS):
            found = _holder_of_container(ref, scopes, 1)
            if found is not None:
                return found
    return None


MAX_SCAN = 4096  # items looked at per container when searching for views


def _storage(t: torch.Tensor) -> int | None:
    try:
        return int(t.untyped_storage().data_ptr())
    except (RuntimeError, AttributeError, TypeError):
        return None


def _holds_view(value: Any, tensor: torch.Tensor, ptr: int) -> bool:
    if isinstance(value, torch.Tensor):
        return value is not tensor and _storage(value) == ptr
    if isinstance(value, dict):
        value = value.values()
    if isinstance(value, (list, tuple, set, collections.deque, type({}.values()))):
        for i, item in enumerate(value):
            if i >= MAX_SCAN:
                break
            if isinstance(item, torch.Tensor) and item is not tensor and _storage(item) == ptr:
                return True
    return False


def find_view_holder(tensor: torch.Tensor, frames: list[FrameType]) -> Holder | None:
    """A name that keeps a view of ``tensor`` (``history.append(logits[:, -1])``): the view
    shares the output's storage, so under a graph it aliases the static buffer too. Only
    asked while ``tensor`` is alive, so its storage cannot have been reused by another."""
    ptr = _storage(tensor)
    if not ptr:
        return None
    for scope in scopes_of(frames):
        for name, value in list(scope.names.items()):
            if name.startswith("__") or not _holds_view(value, tensor, ptr):
                continue
            kind = "variable" if isinstance(value, torch.Tensor) else type(value).__name__
            return Holder(name, kind, scope.label, scope.file, scope.first, scope.last)
    return None


_STORE = r"\s*(?:\.\s*(?:append|extend|insert|appendleft|add|update|setdefault|put)\s*\(|\[[^\]]*\]\s*=(?!=)|\+=)"


def _pattern(holder: Holder) -> re.Pattern[str]:
    if holder.attribute:
        attr = re.escape(holder.name.rsplit(".", 1)[-1])
        if holder.kind == "attribute":
            return re.compile(rf"\.{attr}\s*=(?!=)")
        return re.compile(rf"\.{attr}{_STORE}")
    name = re.escape(holder.name)
    if holder.kind == "variable":
        return re.compile(rf"^\s*(?:[\w\s,()\[\]*]*,\s*)?\(?{name}\s*(?:,[\w\s,()\[\]*]*)?\)?\s*=(?!=)")
    return re.compile(rf"(?<![\w.]){name}{_STORE}")


def _hits(file: str, first: int, last: int, pattern: re.Pattern[str]) -> list[int]:
    lines = linecache.getlines(file)
    return [i for i in range(max(first, 1), min(last, len(lines)) + 1) if pattern.search(lines[i - 1])]


def keep_line(holder: Holder, near: int | None) -> dict[str, Any]:
    """The line that stores into the holder, in its scope (for an attribute: in the user's
    frames, then its class), nearest after ``near`` (the call site), else the first such
    line; the scope's first line if none matches."""
    pattern = _pattern(holder)
    ranges = [*holder.more, (holder.file, holder.first, holder.last)] if holder.attribute else [(holder.file, holder.first, holder.last)]
    file, line = holder.file, holder.first
    for rfile, first, last in ranges:
        hits = _hits(rfile, first, last, pattern)
        if hits:
            after = [i for i in hits if near is not None and i >= near]
            file, line = rfile, (after or hits)[0]
            break
    lines = linecache.getlines(file)
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return {"file": os.path.realpath(file) if file else None, "line": line, "code": code}


def output_names(code: str) -> dict[str, str]:
    """Names the call site gives the outputs: ``logits, h = step(...)`` -> {"[0]": "logits",
    "[1]": "h"}; ``y = step(x)`` -> {"": "y"}; nothing for other statements."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return {}
    if not tree.body:
        return {}
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target: ast.expr = stmt.targets[0]
    elif isinstance(stmt, ast.AnnAssign):
        target = stmt.target
    else:
        return {}
    if isinstance(target, ast.Name):
        return {"": target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {f"[{i}]": e.id for i, e in enumerate(target.elts) if isinstance(e, ast.Name)}
    return {}
