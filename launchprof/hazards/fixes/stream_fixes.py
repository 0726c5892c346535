"""An unjoined fork: the exact ``wait_stream`` line to add, and after which line."""

from __future__ import annotations

import ast

from launchprof.model.hazard_identity import without_comment
from launchprof.model.findings import FixCode, FixReason
from launchprof.hazards.fixes.fix_context import cannot, indent_of, make
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, dotted, unparse
from launchprof.model.hazard_records import Fix
from launchprof.common.source import line_at


def _side_stream(stmt: ast.stmt | None) -> str | None:
    """``side`` in ``side.wait_stream(...)`` or ``side.wait_event(...)``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(stmt.value) in ("wait_stream", "wait_event"):
        func = stmt.value.func
        if isinstance(func, ast.Attribute):
            return unparse(func.value)
    return None


def _side_block(src: SourceLine, side: str) -> ast.With | None:
    """The first ``with torch.cuda.stream(side):`` after the fork in the same function."""
    fn = src.function
    if fn is None or src.line is None:
        return None
    blocks = sorted((w for w in ast.walk(fn) if isinstance(w, ast.With) and w.lineno > src.line), key=lambda w: w.lineno)
    for w in blocks:
        for item in w.items:
            e = item.context_expr
            if isinstance(e, ast.Call) and dotted(e.func).endswith("stream") and e.args and unparse(e.args[0]) == side:
                return w
    return None


def join_fix(src: SourceLine) -> Fix:
    side = _side_stream(src.stmt)
    if side is None:
        return cannot(src, "unjoined-stream", FixReason.NOT_PLAIN_FORK)
    join = f"torch.cuda.current_stream().wait_stream({side})"
    block = _side_block(src, side)
    if block is None:
        return make(src, f"{src.code}\n# ... side work ...\n{join}  # before the step returns", FixCode.JOIN_BEFORE_RETURN, {"side": side})
    anchor = block.end_lineno or block.lineno
    indent = indent_of(src, block.lineno)
    last = line_at(src.file or "", anchor).rstrip("\n")
    base = indent_of(src, anchor)
    before = without_comment(last)
    pad = base[len(indent):] if base.startswith(indent) else ""
    after = f"{pad}{before}\n{join}"
    return make(src, after, FixCode.JOIN_AFTER_BLOCK, {"side": side, "line": anchor}, before=pad + before, line=anchor, indent=indent)
