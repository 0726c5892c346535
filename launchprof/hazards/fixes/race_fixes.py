"""A stream race: the read (or write) on one stream and the write on a side stream, with
nothing ordering them. Written as a diff at the later access: the join the function already
has, moved before it (two lines swapped), or a new wait on the side stream right before it."""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.hazards.fixes.fix_context import cannot, make, statement_text
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, dotted, unparse
from launchprof.model.hazard_records import Fix
from launchprof.render.words.fix_text import join_call


def _side_of(fn: ast.AST, line: int) -> str | None:
    """``side`` of the innermost ``with torch.cuda.stream(side):`` around ``line``."""
    best: tuple[int, str] | None = None
    for w in ast.walk(fn):
        if not isinstance(w, ast.With) or not (w.lineno < line <= (w.end_lineno or w.lineno)):
            continue
        for item in w.items:
            e = item.context_expr
            if isinstance(e, ast.Call) and dotted(e.func).endswith("stream") and e.args and (best is None or w.lineno > best[0]):
                best = (w.lineno, unparse(e.args[0]))
    return best[1] if best else None


def _block_of(fn: ast.AST, stmt: ast.stmt) -> list[ast.stmt] | None:
    for sub in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(sub, field, None)
            if isinstance(block, list) and stmt in block:
                return block
    return None


def _is_join(stmt: ast.stmt, side: str) -> bool:
    """``<stream>.wait_stream(side)`` (or ``wait_event`` on an event of ``side``'s) on another stream."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(stmt.value) in ("wait_stream", "wait_event")):
        return False
    call = stmt.value
    waiter = unparse(call.func.value) if isinstance(call.func, ast.Attribute) else ""
    return waiter != side and bool(call.args) and side in unparse(call.args[0])


def race_fix(src: SourceLine, write_line: int | None, other_line: int | None) -> Fix:
    fn, line = src.function, src.line
    later = src.node(ast.stmt) if fn is not None else None
    if fn is None or line is None or not isinstance(later, ast.stmt):
        return cannot(src, "stream-race", FixReason.LONGER_STATEMENT if src.stmt is None else FixReason.NONE)
    earlier = other_line if write_line == line else write_line
    side = _side_of(fn, int(earlier)) if earlier else None  # the later access's stream waits for this one
    if not side or side == _side_of(fn, line):
        return cannot(src, "stream-race", FixReason.RACE_STREAMS_UNNAMED)
    params: dict[str, Param] = {"line": line, "earlier_line": earlier, "side": side}
    block = _block_of(fn, later) or [later]
    rest = block[block.index(later) + 1 :]
    join = next((s for s in rest if _is_join(s, side)), None)
    last = (later.end_lineno or line)
    if join is not None:
        end = join.end_lineno or join.lineno
        before = statement_text(src, line, end)
        moved = statement_text(src, join.lineno, end)
        between = statement_text(src, line, join.lineno - 1)
        return make(src, f"{moved}\n{between}", FixCode.RACE_JOIN_FIRST, {**params, "join_line": join.lineno}, before=before)
    code = statement_text(src, line, last)
    return make(src, f"{join_call(side)}\n{code}", FixCode.RACE_WAIT, params, before=code)
