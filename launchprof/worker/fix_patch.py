"""A written fix applied to a copy of the function that holds its line, in the script's own namespace.

The copy is the function's source with the fix's lines replaced, compiled with the original's
file name and line numbers in the original's globals (its decorators applied again), and
installed where the step looks the function up: the module(s) that hold it, or the class
that holds the method. ``installed`` puts the originals back when the trial ends. Torch-free:
tests/test_fix_patch.py checks it on CPU.

A function with free variables (a closure, or a method that calls ``super()``) is refused:
its cells belong to the original, and a copy compiled alone would not have them.
"""

from __future__ import annotations

import __future__
import ast
import contextlib
import inspect
import os
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from launchprof.model.fix_scope import TrialReason


class NotPatchable(Exception):
    """The fix cannot be tried by recompiling its function: ``reason`` says why."""

    def __init__(self, reason: TrialReason, detail: str = "") -> None:
        super().__init__(detail or reason.value)
        self.reason = reason


@dataclass(frozen=True)
class Patch:
    """The lines ``first``..``last`` of ``file`` replaced by ``lines`` (indented as the file
    has them); ``last == first - 1`` inserts before ``first``."""

    file: str
    first: int
    last: int
    lines: tuple[str, ...]


def patch_of(file: str, line: int, before: str, after: str, indent: str) -> Patch:
    """The patch a Fix describes: its ``before`` lines from ``line`` on become ``after``, each
    line written with the fix's ``indent`` (``after`` is stored without it)."""
    count = len(before.splitlines()) if before.strip() else 0
    lines = tuple(f"{indent}{text}" if text.strip() else "" for text in after.splitlines())
    return Patch(file=file, first=line, last=line + count - 1, lines=lines)


@dataclass(frozen=True)
class Holder:
    """A plain function, the object stored for it (its decorated form, a staticmethod) and
    where that object is looked up: ``owner.name`` (a module or a class), or nowhere when it
    is the target itself, which the trial calls directly."""

    fn: types.FunctionType
    stored: Any
    owner: Any = None
    name: str = ""


def plain_function(obj: Any) -> types.FunctionType | None:
    """The Python function behind ``obj``: through decorators' ``__wrapped__``, static and
    class methods and bound methods; None for anything else."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    try:
        obj = inspect.unwrap(obj)
    except ValueError:
        return None
    return obj if isinstance(obj, types.FunctionType) else None


def same_file(a: str | None, b: str | None) -> bool:
    return bool(a and b) and os.path.realpath(str(a)) == os.path.realpath(str(b))


def source_span(fn: types.FunctionType) -> tuple[list[str], int]:
    """The function's source lines (decorators included) and its first line number."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise NotPatchable(TrialReason.NOT_IN_A_FUNCTION, f"no source: {exc}") from None
    return lines, max(start, 1)


def holds(fn: types.FunctionType, patch: Patch) -> bool:
    """Whether ``fn``'s source spans the patched lines."""
    try:
        lines, start = source_span(fn)
    except NotPatchable:
        return False
    return same_file(fn.__code__.co_filename, patch.file) and start <= patch.first and max(patch.last, patch.first) <= start + len(lines) - 1


def holders_in(file: str) -> Iterator[Holder]:
    """Module-level functions and the methods of module-level classes defined in ``file``."""
    for module in list(sys.modules.values()):
        if not same_file(getattr(module, "__file__", None), file):
            continue
        for name, obj in list(vars(module).items()):
            fn = plain_function(obj)
            if fn is not None and same_file(fn.__code__.co_filename, file):
                yield Holder(fn, obj, module, name)
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                for attr, member in list(vars(obj).items()):
                    method = plain_function(member)
                    if method is not None and same_file(method.__code__.co_filename, file):
                        yield Holder(method, member, obj, attr)


def find_holder(patch: Patch, target: Any, ran: Callable[[types.FunctionType], bool]) -> Holder:
    """The innermost function the step ran whose source holds the patched lines: the target
    itself first, then ``file``'s functions and methods that ``ran`` accepts."""
    own = plain_function(target)
    found = [Holder(own, target)] if own is not None and holds(own, patch) else []
    found += [h for h in holders_in(patch.file) if h.fn is not own and holds(h.fn, patch) and ran(h.fn)]
    if not found:
        raise NotPatchable(TrialReason.NOT_IN_A_FUNCTION)
    best = max(found, key=lambda h: source_span(h.fn)[1])
    if best.fn.__code__.co_freevars:
        raise NotPatchable(TrialReason.CLOSURE, ", ".join(best.fn.__code__.co_freevars))
    if in_nested_function(best.fn, patch):
        raise NotPatchable(TrialReason.CLOSURE, "the line is in a function defined inside another")
    return best


def in_nested_function(fn: types.FunctionType, patch: Patch) -> bool:
    """Whether the patched lines lie in a function defined inside ``fn``: the step ran that
    inner function, a closure the copy of ``fn`` would not replace."""
    lines, start = source_span(fn)
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return False
    outer = tree.body[0] if tree.body else None
    for node in ast.walk(tree):
        if node is not outer and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            first, last = node.lineno + start - 1, (node.end_lineno or node.lineno) + start - 1
            if first <= patch.first <= last:
                return True
    return False


def patched_source(fn: types.FunctionType, patch: Patch) -> tuple[str, int]:
    """The function's source with the patch applied, dedented, and its first line number."""
    lines, start = source_span(fn)
    head, tail = lines[: patch.first - start], lines[patch.last - start + 1 :]
    text = "".join(head) + "".join(f"{line}\n" for line in patch.lines) + "".join(tail)
    return textwrap.dedent(text), start


def compile_patched(holder: Holder, patch: Patch) -> Any:
    """The patched copy of ``holder``'s function as its stored object would be: compiled in
    the original's globals with the file's line numbers, its decorators applied again."""
    fn = holder.fn
    text, start = patched_source(fn, patch)
    try:
        tree = ast.parse(text, filename=fn.__code__.co_filename)
    except SyntaxError as exc:
        raise NotPatchable(TrialReason.NOT_COMPILED, f"SyntaxError: {exc.msg}") from None
    defs = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(tree.body) != 1 or not defs:
        raise NotPatchable(TrialReason.NOT_COMPILED, "the patched source is not one function")
    ast.increment_lineno(tree, start - 1)
    namespace: dict[str, Any] = {}
    try:
        code = compile(tree, fn.__code__.co_filename, "exec", flags=future_flags(fn), dont_inherit=True)
        exec(code, fn.__globals__, namespace)  # noqa: S102 - the user's own code, patched
    except Exception as exc:
        raise NotPatchable(TrialReason.NOT_COMPILED, f"{type(exc).__name__}: {str(exc)[:200]}") from None
    new = namespace[defs[0].name]
    if plain_function(new) is not None and plain_function(new).__code__.co_freevars:  # type: ignore[union-attr]
        raise NotPatchable(TrialReason.CLOSURE)
    if isinstance(holder.stored, staticmethod) and not isinstance(new, staticmethod):
        new = staticmethod(new)
    elif isinstance(holder.stored, classmethod) and not isinstance(new, classmethod):
        new = classmethod(new)
    return new


def future_flags(fn: types.FunctionType) -> int:
    """The ``from __future__`` features the original was compiled with (its code keeps them)."""
    flags = 0
    for name in __future__.all_feature_names:
        flag = getattr(__future__, name).compiler_flag
        if fn.__code__.co_flags & flag:
            flags |= flag
    return flags


def places_of(holder: Holder) -> list[tuple[Any, str]]:
    """Every place the step may look the stored object up: its class, or every module that
    holds it under some name (``from helpers import f`` binds it twice)."""
    if holder.owner is None:
        return []
    if isinstance(holder.owner, type):
        return [(holder.owner, holder.name)]
    out = []
    for module in list(sys.modules.values()):
        try:
            names = [n for n, v in vars(module).items() if v is holder.stored]
        except TypeError:
            continue
        out += [(module, n) for n in names]
    return out or [(holder.owner, holder.name)]


@contextlib.contextmanager
def installed(holder: Holder, new: Any) -> Iterator[None]:
    """``new`` where the step looks the function up, the originals back afterwards."""
    saved = [(owner, name, vars(owner)[name]) for owner, name in places_of(holder) if name in vars(owner)]
    try:
        for owner, name, _ in saved:
            setattr(owner, name, new)
        yield
    finally:
        for owner, name, old in saved:
            setattr(owner, name, old)


def trial_callable(holder: Holder, new: Any, target: Any) -> Any:
    """What the trial calls: the patched target itself (bound as the target was), or the
    target, unchanged, whose callee is patched in its place."""
    if holder.owner is not None:
        return target
    if isinstance(target, types.MethodType) and not isinstance(new, (staticmethod, classmethod)):
        return new.__get__(target.__self__, type(target.__self__))
    return new
