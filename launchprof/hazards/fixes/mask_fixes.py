"""``nonzero`` and boolean-mask routing: a data-dependent size the host must read.

The fix keeps every shape fixed: compute on all rows and select with ``torch.where`` (or a
one-hot weight). For a mixture of experts that is every expert on all rows, then select:
more arithmetic, no host read, one graph.
"""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason
from launchprof.hazards.fixes.fix_context import FixContext, cannot, make
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, unparse
from launchprof.model.hazard_records import Fix


class _Unmask(ast.NodeTransformer):
    """``x[mask]`` -> ``x``: compute on every row."""

    def __init__(self, mask: str) -> None:
        self.mask = mask

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        return node.value if unparse(node.slice) == self.mask else node


def _nonzero_source(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """``idx = COND.nonzero()...`` or ``idx = torch.nonzero(COND)...`` -> ``(idx, COND)``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    for sub in ast.walk(stmt.value):
        if isinstance(sub, ast.Call) and call_name(sub) in ("nonzero", "argwhere", "where"):
            if isinstance(sub.func, ast.Attribute) and not (isinstance(sub.func.value, ast.Name) and sub.func.value.id == "torch"):
                return stmt.targets[0].id, sub.func.value
            if sub.args:
                return stmt.targets[0].id, sub.args[0]
    return None


def _routed_assignment(stmt: ast.stmt, index: str, cond: str) -> str | None:
    """``out[idx] = f(x[idx])`` -> ``out = torch.where(COND[:, None], f(x), out)``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)):
        return None
    target = stmt.targets[0]
    if unparse(target.slice) != index:
        return None
    value = _Unmask(index).visit(ast.parse(unparse(stmt.value), mode="eval").body)
    out = unparse(target.value)
    return f"{out} = torch.where(({cond}).unsqueeze(-1), {unparse(value)}, {out})"


def _later_use(src: SourceLine, index: str, cond: str) -> tuple[int, str, str] | None:
    """The assignment after ``src`` in the same function that routes rows through ``index``."""
    fn = src.function
    if fn is None or src.line is None:
        return None
    for sub in sorted((s for s in ast.walk(fn) if isinstance(s, ast.Assign)), key=lambda s: s.lineno):
        if sub.lineno > src.line:
            written = _routed_assignment(sub, index, cond)
            if written:
                return sub.lineno, unparse(sub), written
    return None


def mask_fix(src: SourceLine, ctx: FixContext) -> Fix:
    stmt = src.stmt
    if stmt is None:
        return cannot(src, "hidden-sync", FixReason.LONGER_STATEMENT)
    found = _nonzero_source(stmt)
    if found:
        index, cond_node = found
        cond = unparse(cond_node)
        use = _later_use(src, index, cond)
        if use:
            line, used, written = use
            before = f"{src.code}\n{used}"
            params = {"line": src.line, "use_line": line, "before_lines": [int(src.line or 0), line]}
            return make(src, written, FixCode.MASK_LATER_USE, params, before=before)
        after = f"{index}_mask = {cond}  # compute every row, then select: torch.where({index}_mask.unsqueeze(-1), new, old)"
        return make(src, after, FixCode.NONZERO_MASK)
    routed = _masked_assignment(stmt)
    if routed:
        return make(src, routed, FixCode.MASK_ASSIGN)
    selected = _masked_read(stmt)
    if selected:
        return make(src, selected, FixCode.MASK_READ)
    return cannot(src, "hidden-sync", FixReason.NO_MASK)


def _mask_of(node: ast.AST) -> str | None:
    """The mask expression of ``x[mask]`` when it is visibly boolean (a comparison or ``~``)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Compare, ast.UnaryOp, ast.Name, ast.BinOp)):
        return unparse(node.slice)
    return None


def _masked_assignment(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        mask = _mask_of(stmt.targets[0])
        if mask is not None:
            return _routed_assignment(stmt, mask, mask)
    return None


def _masked_read(stmt: ast.stmt) -> str | None:
    """``keep = h[h > 0]`` -> ``keep = torch.where(h > 0, h, torch.zeros_like(h))``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
        mask = _mask_of(value)
        if mask is not None and isinstance(value, ast.Subscript):
            base = unparse(value.value)
            return f"{unparse(stmt.targets[0])} = torch.where({mask}, {base}, torch.zeros_like({base}))"
    return None
