"""Whole-script mode: which user functions launch the most kernels per call.

With ``with_stack=True`` the profiler records every Python call as an event named
``path(def_line): name`` (the path shortened by its ``sys.path`` prefix), and each op's
``cpu_parent`` chain leads up through them. A kernel is charged to the innermost user
function above the op that launched it; a function's calls are its Python events. The
ratio is what a target would replay per call, so the top ones are the targets to try.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PY_EVENT = re.compile(r"^(?P<file>.+\.py)\((?P<line>\d+)\): (?P<name>[A-Za-z_][A-Za-z0-9_]*)$")
MAX_CANDIDATES = 5


@dataclass
class Tally:
    file: str
    line: int
    name: str
    calls: int = 0
    kernels: int = 0


def user_function(name: str, is_user_file: Callable[[str], str | None]) -> tuple[str, int, str] | None:
    """(absolute file, def line, name) when a Python-call event is a function in the user's files."""
    m = _PY_EVENT.match(name)
    if m is None:
        return None
    path = is_user_file(m["file"])
    return None if path is None else (path, int(m["line"]), m["name"])


def tally(events: list[Any], is_user_file: Callable[[str], str | None], launches: Callable[[Any], int]) -> dict[tuple[str, int], Tally]:
    """Calls and kernels per user function from the profiler's events (``prof.events()``)."""
    out: dict[tuple[str, int], Tally] = {}
    for e in events:
        fn = user_function(e.name, is_user_file)
        if fn is not None:
            t = out.setdefault(fn[:2], Tally(*fn))
            t.calls += 1
    for e in events:
        n = launches(e)
        if not n:
            continue
        parent = getattr(e, "cpu_parent", None)
        while parent is not None:
            fn = user_function(parent.name, is_user_file)
            if fn is not None:
                out.setdefault(fn[:2], Tally(*fn)).kernels += n
                break
            parent = getattr(parent, "cpu_parent", None)
    return out


def qualname(path: str, line: int, name: str) -> str | None:
    """``Class.method`` or ``fn`` for a def at ``line``; None for nested functions and
    module code, which ``--target`` cannot name."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return name

    def walk(body: list[ast.stmt], prefix: str) -> str | None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.name == name and first <= line <= node.lineno:
                    return prefix + node.name
            elif isinstance(node, ast.ClassDef):
                found = walk(node.body, f"{prefix}{node.name}.")
                if found:
                    return found
        return None

    return walk(tree.body, "")


def candidates(tallies: dict[tuple[str, int], Tally], script: str) -> list[dict[str, Any]]:
    """The top functions by kernels per call, each with the command that analyses it."""
    rows = []
    for t in tallies.values():
        if t.calls == 0 or t.kernels == 0 or t.name == "<module>":
            continue
        name = qualname(t.file, t.line, t.name)
        if name is None:
            continue
        rows.append(
            {
                "name": name,
                "file": t.file,
                "line": t.line,
                "calls": t.calls,
                "kernels_per_call": round(t.kernels / t.calls, 2),
                "command": f"launchprof analyze {script} --target {name}",
            }
        )
    rows.sort(key=lambda r: (-r["kernels_per_call"], -r["calls"], r["name"]))
    return rows[:MAX_CANDIDATES]


def user_file_resolver(script_dir: str) -> Callable[[str], str | None]:
    """Maps a profiler path (shortened by its sys.path prefix) to a file under the script's folder."""
    root = Path(script_dir).resolve()
    cache: dict[str, str | None] = {}

    def resolve(shown: str) -> str | None:
        if shown not in cache:
            path = Path(shown) if Path(shown).is_absolute() else root / shown
            try:
                ok = path.is_file() and path.resolve().is_relative_to(root) and "site-packages" not in path.parts
            except OSError:
                ok = False
            cache[shown] = str(path.resolve()) if ok else None
        return cache[shown]

    return resolve
