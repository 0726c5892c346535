"""Host side effects of one step whose lines depend on each other: one fix for all of them.

``n_calls += 1`` and ``history.append(n_calls)`` fixed one at a time (the counter in a device
tensor, the append moved to the caller) append a constant. The two are one piece of
bookkeeping: both move to the caller together, and each hazard carries that same fix (the
report prints it once and points the other hazard at it).
"""

from __future__ import annotations

import ast
import dataclasses

from launchprof.events.record import Site
from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.hazards.fixes.fix_context import cannot, make, statement_text
from launchprof.hazards.fixes.fix_source import FunctionNode, SourceLine, enclosing_function, source_line
from launchprof.common.source import parse_module
from launchprof.model.hazard_records import Fix, Hazard

_MUTATORS = {"append", "appendleft", "extend", "insert", "add", "update", "pop", "popleft", "clear", "remove", "setdefault", "discard"}


def _unit(fn: FunctionNode, line: int) -> ast.stmt | None:
    """The statement on ``line``, widened to an ``if`` that holds only it (``if n % 50 == 0:
    print(n)`` moves as a whole)."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    stmt = next((s for s in ast.walk(fn) if isinstance(s, ast.stmt) and s is not fn and s.lineno == line), None)
    while stmt is not None:
        up = parents.get(stmt)
        if not (isinstance(up, ast.If) and up.body == [stmt] and not up.orelse):
            return stmt
        stmt = up
    return None


def _writes(unit: ast.stmt) -> set[str]:
    out = {n.id for n in ast.walk(unit) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for n in ast.walk(unit):  # `history.append(...)` changes `history`
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS and isinstance(n.func.value, ast.Name):
            out.add(n.func.value.id)
    return out


def _reads(unit: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(unit) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _components(units: list[ast.stmt]) -> list[list[int]]:
    """Indices of ``units`` linked by a name one writes and another reads or writes."""
    link = {i: {i} for i in range(len(units))}
    for i, a in enumerate(units):
        for j, b in enumerate(units[i + 1 :], i + 1):
            if _writes(a) & (_reads(b) | _writes(b)) or _writes(b) & _reads(a):
                joined = link[i] | link[j]
                for k in joined:
                    link[k] = joined
    seen: list[list[int]] = []
    for group in link.values():
        ordered = sorted(group)
        if len(ordered) > 1 and ordered not in seen:
            seen.append(ordered)
    return seen


def _locals(fn: FunctionNode) -> set[str]:
    """Names the step binds itself: its arguments and what it assigns, less its globals."""
    declared = {n for s in ast.walk(fn) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
    args = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg] if a is not None}
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return (args | stored) - declared


def _group_fix(file: str, fn: FunctionNode, units: list[ast.stmt], lines: list[int], call_site: Site | None) -> Fix:
    src = source_line(file, units[0].lineno)
    written = set().union(*(_writes(u) for u in units))
    shared: set[str] = set()
    for i, a in enumerate(units):
        for b in units[i + 1 :]:
            shared |= _writes(a) & (_reads(b) | _writes(b)) | _writes(b) & _reads(a)
    step_values = sorted((set().union(*(_reads(u) for u in units)) & _locals(fn)) - written)
    if step_values:
        return cannot(src, "host-side-effect", FixReason.EFFECTS_READ_LOCALS, lines=lines, names=step_values)
    declared = sorted({n for s in ast.walk(fn) if isinstance(s, ast.Global) for n in s.names} & written)
    call_line = int(call_site.line) if call_site is not None and call_site.line and call_site.file == file else None
    caller = enclosing_function(parse_module(file), call_line) if call_line else None
    head = f"# (moved) in the caller, after each call of the step{f' (line {call_line})' if call_line else ''}:"
    glob = [f"global {', '.join(declared)}"] if declared and caller is not None else []
    body = [statement_text(src, u.lineno, u.end_lineno or u.lineno) for u in units]
    spans = [n for u in units for n in range(u.lineno, (u.end_lineno or u.lineno) + 1)]
    params: dict[str, Param] = {"lines": lines, "names": sorted(shared), "call_line": call_line, "before_lines": spans}
    return make(src, "\n".join([head, *glob, *body]), FixCode.MOVED_TOGETHER, params, before="\n".join(body))


def grouped_effects(hazards: list[Hazard], call_site: Site | None) -> list[Hazard]:
    """``hazards`` with one shared fix on each set of host-side-effect lines of a function
    that read or write each other's names."""
    by_function: dict[tuple[str, int], list[tuple[int, Hazard]]] = {}
    for i, h in enumerate(hazards):
        if h.kind == "host-side-effect" and h.file and h.line and h.library_site is None:
            fn = enclosing_function(parse_module(h.file), h.line)
            if fn is not None:
                by_function.setdefault((h.file, fn.lineno), []).append((i, h))
    out = list(hazards)
    for (file, _), found in by_function.items():
        fn = enclosing_function(parse_module(file), found[0][1].line)
        if fn is None:
            continue
        units: list[ast.stmt] = []
        owner: list[list[int]] = []  # the hazards behind each unit
        for i, h in found:
            unit = _unit(fn, int(h.line or 0))
            if unit is None:
                continue
            if unit in units:
                owner[units.index(unit)].append(i)
            else:
                units.append(unit)
                owner.append([i])
        for group in _components(units):
            members = sorted(group, key=lambda k: units[k].lineno)
            lines = sorted({int(hazards[i].line or 0) for k in members for i in owner[k]})
            fix = _group_fix(file, fn, [units[k] for k in members], lines, call_site)
            for k in members:
                for i in owner[k]:
                    out[i] = dataclasses.replace(out[i], fix=fix)
    return out


def kept_fix(src: SourceLine, params: dict[str, Param]) -> Fix:
    """The line that keeps a step's output, with the clone written in (the hazard's ``fix_code``)."""
    code, holder = params.get("fix_code"), str(params.get("holder") or "")
    if not code or not src.code:
        return cannot(src, "kept-output", FixReason.KEPT_NOT_APPEND, holder=holder)
    return make(src, str(code), FixCode.CLONE_KEPT, {"holder": holder, "output": params.get("fix_name") or params.get("output")})


def with_kept_clones(hazards: list[Hazard]) -> list[Hazard]:
    """An append in the step that is both a host side effect (moved to the caller) and a kept
    output (cloned): one fix, the append moved with its clone, shared by both hazards."""
    out = list(hazards)
    for i, h in enumerate(hazards):
        if h.kind != "kept-output" or h.fix is None or h.fix.code != FixCode.CLONE_KEPT.value:
            continue
        for j, o in enumerate(out):
            moved = o.fix
            if o.kind == "host-side-effect" and (o.file, o.line) == (h.file, h.line) and moved is not None and moved.code == FixCode.MOVED_TO_CALLER.value:
                shared = dataclasses.replace(moved, after=moved.after.replace(moved.before, h.fix.after))
                out[j] = dataclasses.replace(o, fix=shared)
                out[i] = dataclasses.replace(h, fix=shared)
    return out
