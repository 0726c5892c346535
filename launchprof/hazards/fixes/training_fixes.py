"""Fixes for a training step's capture failures (launchprof.hazards.training), written from the
user's own lines: the step's ``return`` detached, the optimizer's constructor with
``capturable=True`` (and ``fused=True`` for a GradScaler), GradScaler's options ranked by
what they gain; where no line can be rewritten, the note names the change."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

from launchprof.common.source import function_at, lines_of
from launchprof.hazards.fixes.fix_context import make
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, source_line, unparse
from launchprof.model.findings import FixCode, Param
from launchprof.model.hazard_identity import without_comment
from launchprof.model.hazard_records import Fix, Hazard


def _note_only(src: SourceLine, code: FixCode, params: dict[str, Param]) -> Fix:
    """A fix whose change spans lines launchprof does not rewrite: its note says it."""
    return make(src, "", code, params)


def _single_return(file: str, line: int) -> ast.Return | None:
    """The target's one ``return <value>`` (not a tuple, not already detached), else None."""
    fn = function_at(file, line)
    if fn is None:
        return None
    returns: list[ast.Return] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:  # the function's own statements, not those of functions nested in it
        node = stack.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    if len(returns) != 1 or returns[0].value is None or isinstance(returns[0].value, ast.Tuple):
        return None
    value = returns[0].value
    if isinstance(value, ast.Call) and call_name(value) == "detach":
        return None
    return returns[0]


def kept_graph_fix(h: Hazard) -> Fix:
    d, name = h.details, h.params.get("name")
    src = source_line(h.file, h.line, d.get("code"))
    target = d.get("target_at")
    if name and d.get("bound_by_call") and target and target.get("file") and target.get("line"):
        ret = _single_return(str(target["file"]), int(target["line"]))
        if ret is not None and ret.value is not None:
            at = source_line(str(target["file"]), ret.lineno)
            if isinstance(at.stmt, ast.Return):  # the return fits on its line
                detached = ast.Return(value=ast.Call(func=ast.Attribute(value=ret.value, attr="detach", ctx=ast.Load()), args=[], keywords=[]))
                return make(at, unparse(detached), FixCode.DETACH_RETURN, {"name": name, "line": h.line})
    return _note_only(src, FixCode.DROP_KEPT_GRAPH, {"name": name, "line": h.line})


def _statement(src: SourceLine) -> ast.stmt | None:
    """The statement that starts on ``src``'s line, from the whole file's tree (its positions
    are the file's)."""
    for kind in (ast.Assign, ast.AnnAssign, ast.Expr):
        node = src.node(kind)
        if isinstance(node, ast.stmt):
            return node
    return None


def _edited(lines: list[bytes], first: int, edits: list[tuple[int, int, int, int, str]]) -> list[str]:
    """``lines`` (the file's, from line ``first``) with each (line, col, end line, end col,
    text) span replaced, last first; columns are the AST's byte offsets."""
    out = list(lines)
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        a, b = line - first, end_line - first
        head, tail = out[a][:col], out[b][end_col:]
        out[a : b + 1] = [head + text.encode() + tail]
    return [raw.decode("utf-8", "replace") for raw in out]


def _dedented(lines: list[str]) -> str:
    kept = [raw[: len(raw) - len(raw.lstrip())] + without_comment(raw) if without_comment(raw) else "" for raw in lines]
    return textwrap.dedent("\n".join(kept)).strip("\n").rstrip()


def with_keywords(src: SourceLine, callee: str | None, keywords: dict[str, Any]) -> tuple[str, str] | None:
    """(before, after) of the statement on ``src``'s line with ``keywords`` set on its call of
    ``callee`` (``torch.optim.Adam(...)``: ``Adam``), the rest of the user's text as written;
    None when there is no such call."""
    stmt = _statement(src)
    if stmt is None or not callee or not src.file:
        return None
    call = next((n for n in ast.walk(stmt) if isinstance(n, ast.Call) and call_name(n) == callee), None)
    if call is None or call.end_lineno is None or call.end_col_offset is None:
        return None
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    raw = [line.rstrip("\n").encode() for line in lines_of(src.file)[first - 1 : last]]
    edits = []
    present = {k.arg: k for k in call.keywords if k.arg}
    added = []
    for key, value in keywords.items():
        kw = present.get(key)
        if kw is not None and kw.value.end_lineno is not None and kw.value.end_col_offset is not None:
            edits.append((kw.value.lineno, kw.value.col_offset, kw.value.end_lineno, kw.value.end_col_offset, repr(value)))
        elif kw is None:
            added.append(f"{key}={value!r}")
    if added:
        given = [n for n in [*call.args, *(k.value for k in call.keywords)] if n.end_lineno is not None]
        last_arg = max(given, key=lambda n: (n.end_lineno, n.end_col_offset), default=None)
        if last_arg is not None:  # right after the last argument, before any line break or comma
            line, col, text = int(last_arg.end_lineno or 0), int(last_arg.end_col_offset or 0), ", " + ", ".join(added)
        else:  # inside the empty parentheses
            line, col, text = call.end_lineno, call.end_col_offset - 1, ", ".join(added)
        edits.append((line, col, line, col, text))
    before = _dedented([r.decode("utf-8", "replace") for r in raw])
    return before, _dedented(_edited(raw, first, edits))


def _at_constructor(built: dict[str, Any] | None) -> SourceLine | None:
    if not built or not built.get("file") or not built.get("line"):
        return None
    return source_line(str(built["file"]), int(built["line"]), built.get("code"))


def optimizer_fix(h: Hazard) -> Fix:
    d, opt = h.details, h.params.get("optimizer")
    at = _at_constructor(d.get("built_at"))
    rewritten = with_keywords(at, str(opt) if opt else None, {"capturable": True}) if at is not None else None
    if at is not None and rewritten is not None:
        before, after = rewritten
        return make(at, after, FixCode.CAPTURABLE_OPTIMIZER, {"optimizer": opt, "written": True}, before=before)
    return _note_only(source_line(h.file, h.line, d.get("code")), FixCode.CAPTURABLE_OPTIMIZER, {"optimizer": opt, "written": False})


def scaler_fix(h: Hazard) -> Fix:
    """GradScaler's options ranked by what they gain: a fused optimizer (whole step, same
    numerics) where this torch and optimizer allow it, bf16 autocast without a scaler (whole
    step, other numerics), then forward and backward alone. Option 1 is written where its
    line can be: the optimizer's constructor, or ``opt.step()`` for ``scaler.step(opt)``."""
    d, p = h.details, h.params
    options = (["fused-optimizer"] if d.get("fused_option") else []) + ["bf16-autocast", "graphed-forward-backward"]
    params: dict[str, Param] = {
        "options": options, "optimizer": p.get("optimizer"), "variable": p.get("variable"),
        "partial_speedup": p.get("partial_speedup"), "written": True,
    }
    src = source_line(h.file, h.line, d.get("code"))
    if options[0] == "fused-optimizer":
        at = _at_constructor(d.get("built_at"))
        opt = p.get("optimizer")
        rewritten = with_keywords(at, str(opt) if opt else None, {"fused": True, "capturable": True}) if at is not None else None
        if at is not None and rewritten is not None:
            return make(at, rewritten[1], FixCode.GRAD_SCALER_OPTIONS, params, before=rewritten[0])
        return _note_only(src, FixCode.GRAD_SCALER_OPTIONS, {**params, "written": False})
    stmt = src.stmt
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(stmt.value) == "step" and len(stmt.value.args) == 1:
        return make(src, f"{unparse(stmt.value.args[0])}.step()", FixCode.GRAD_SCALER_OPTIONS, params)
    return _note_only(src, FixCode.GRAD_SCALER_OPTIONS, {**params, "written": False})


def legacy_fix(h: Hazard) -> Fix:
    return _note_only(source_line(h.file, h.line, h.details.get("code")), FixCode.OFF_LEGACY_STREAM, {"op": h.params.get("op")})
