"""Whole-script mode: which user functions launch the most kernels per call.

With ``with_stack=True`` the profiler records every Python call as a ``python_function``
row of its Chrome trace, named ``path(def_line): name`` (the path shortened by its
``sys.path`` prefix). ``prof.events()`` is not read: torch 2.11 leaves
those calls out of it, so the older reading found no user function at all. The rows come
from the profiler's result tree (launchprof.worker.python_calls), or from the exported
trace where that fails. A kernel is charged to the innermost
user function whose call encloses, on the same thread, the runtime call that launched it
(matched by correlation id); a function's calls are its ``python_function`` rows. The
count is exclusive: a function's own launches, not those of the user functions it calls
(so a once-called ``main`` does not top the list); a target replays its callees' kernels
too, so an outer function's ratio understates its graph. The top ones are the targets to try.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchprof.common.source import python_text
from launchprof.worker.profiler_tables import Timeline

_PY_EVENT = re.compile(r"^(?P<file>.+\.py)\((?P<line>\d+)\): (?P<name>[A-Za-z_][A-Za-z0-9_]*)$")
MAX_CANDIDATES = 5
# Larger Chrome traces are not read back for the ranking (json.load takes about 10x the file).
MAX_TRACE_BYTES = 256 * 2**20


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


def launches_by_correlation(trace: list[dict[str, Any]]) -> dict[Any, int]:
    """Kernels per correlation id: each ``kernel`` row is one launch of its runtime call."""
    out: dict[Any, int] = {}
    for row in trace:
        if row.get("cat") == "kernel":
            corr = (row.get("args") or {}).get("correlation")
            if corr is not None:
                out[corr] = out.get(corr, 0) + 1
    return out


def kernel_launches(trace: list[dict[str, Any]]) -> Callable[[dict[str, Any]], int]:
    """``launches`` for :func:`tally`: kernels per host row, through the correlation id.
    Runtime (``cudaLaunchKernel``) and driver (``cuLaunchKernel``, used by cuBLAS and
    Triton) calls both launch."""
    from launchprof.worker.profiler_tables import RUNTIME_CATEGORIES

    per_corr = launches_by_correlation(trace)

    def launches(row: dict[str, Any]) -> int:
        if row.get("cat") not in RUNTIME_CATEGORIES:
            return 0
        return per_corr.get((row.get("args") or {}).get("correlation"), 0)

    return launches


def call_depths(trace: list[dict[str, Any]]) -> dict[Any, int]:
    """Nesting depth of each Python call by its ``Python id`` / ``Python parent id``: two
    nested calls with the same start and duration (ns ties) are then ordered exactly."""
    parent = {}
    for row in trace:
        args = row.get("args") or {}
        if row.get("cat") == "python_function" and "Python id" in args:
            parent[args["Python id"]] = args.get("Python parent id")
    depth: dict[Any, int] = {}

    def of(node: Any) -> int:
        chain = []
        while node in parent and node not in depth and len(chain) <= len(parent):
            chain.append(node)
            node = parent[node]
        d = depth.get(node, 0)
        for n in reversed(chain):
            d += 1
            depth[n] = d
        return d

    for node in parent:
        of(node)
    return depth


def tally(trace: list[dict[str, Any]], is_user_file: Callable[[str], str | None], launches: Callable[[dict[str, Any]], int]) -> dict[tuple[str, int], Tally]:
    """Calls and kernels per user function from Chrome-trace rows (``traceEvents``).

    ``launches(row)`` says how many kernels a host row launched (0 for most). One sweep per
    thread: rows sorted by start, a stack of the Python calls still open, and each launching
    row charged to the innermost open call that is a user function."""
    out: dict[tuple[str, int], Tally] = {}
    depths = call_depths(trace)
    threads: dict[tuple[Any, Any], list[tuple[float, int, float, int, Any]]] = {}
    for row in trace:
        if row.get("ph") != "X" or "ts" not in row:
            continue
        start, key = float(row["ts"]), (row.get("pid"), row.get("tid"))
        if row.get("cat") == "python_function":
            fn = user_function(str(row.get("name", "")), is_user_file)
            if fn is not None:
                out.setdefault(fn[:2], Tally(*fn)).calls += 1
            # Calls sort before launches at the same instant; longer calls first (outer),
            # and at equal length the outer call by its depth in the Python call tree.
            depth = depths.get((row.get("args") or {}).get("Python id"), 0)
            threads.setdefault(key, []).append((start, 0, -float(row.get("dur", 0.0)), depth, fn))
        else:
            n = launches(row)
            if n:
                threads.setdefault(key, []).append((start, 1, 0.0, 0, n))
    for items in threads.values():
        items.sort(key=lambda item: item[:4])
        open_calls: list[tuple[float, Any]] = []  # (end, user function or None)
        for start, is_launch, neg_dur, _, payload in items:
            while open_calls and open_calls[-1][0] <= start:
                open_calls.pop()
            if not is_launch:
                open_calls.append((start - neg_dur, payload))
                continue
            fn = next((f for _, f in reversed(open_calls) if f is not None), None)
            if fn is not None:
                out.setdefault(fn[:2], Tally(*fn)).kernels += payload
    return out


def trace_rows(prof: Any, folder: Path) -> list[dict[str, Any]]:
    """The profiler's Chrome-trace rows (written to ``folder`` and read back, then removed)."""
    import json

    path = folder / "candidates-trace.json"
    try:
        prof.export_chrome_trace(str(path))
        size = path.stat().st_size
        if size > MAX_TRACE_BYTES:  # a long script's Python calls: reading it back would cost GBs
            raise ValueError(f"the whole-script trace is {size / 2**20:.0f} MiB, over {MAX_TRACE_BYTES / 2**20:.0f} MiB")
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    finally:
        path.unlink(missing_ok=True)
    rows = data.get("traceEvents") if isinstance(data, dict) else data
    return [r for r in rows or [] if isinstance(r, dict)]


def candidate_rows(prof: Any, folder: Path, table: Timeline | None, is_user_file: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """The rows :func:`tally` reads: the Python calls from the profiler's result tree plus
    the timeline rows already read for the table (``table``), or, when that yields no Python
    call, the Chrome export read back (:func:`trace_rows`), which costs seconds more."""
    from launchprof.worker.python_calls import tree_rows

    rows = tree_rows(prof, table, is_user_file) if table is not None else []
    return rows or trace_rows(prof, folder)


def qualname(path: str, line: int, name: str) -> str | None:
    """``Class.method`` or ``fn`` for a def at ``line``; None for nested functions and
    module code, which ``--target`` cannot name."""
    try:
        tree = ast.parse(python_text(path))
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
