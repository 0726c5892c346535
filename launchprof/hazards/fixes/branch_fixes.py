"""A host branch on a tensor's value: select on the device with ``torch.where``, or capture
both branches with ``torch.cond`` (conditional nodes, chosen on the device)."""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.hazards.fixes.fix_context import FixContext, cannot, make, statement_text
from launchprof.hazards.fixes.fix_source import SourceLine, names_in, unparse
from launchprof.model.hazard_records import Fix


def _assignment(stmts: list[ast.stmt]) -> tuple[str, ast.expr] | None:
    """``(name, value)`` when ``stmts`` is one assignment to a plain name (``+=`` expanded)."""
    if len(stmts) != 1:
        return None
    s = stmts[0]
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        return s.targets[0].id, s.value
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
        return s.target.id, ast.BinOp(left=ast.Name(s.target.id, ast.Load()), op=s.op, right=s.value)
    return None


def _returned(stmts: list[ast.stmt]) -> ast.expr | None:
    """The value of ``stmts`` when it is one ``return <value>``."""
    if len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None:
        return stmts[0].value
    return None


def _next_statement(module: ast.Module | None, node: ast.stmt) -> ast.stmt | None:
    """The statement right after ``node`` in the block that holds it."""
    for sub in ast.walk(module) if module is not None else ():
        for field in ("body", "orelse", "finalbody"):
            block = getattr(sub, field, None)
            if isinstance(block, list) and node in block:
                i = block.index(node)
                return block[i + 1] if i + 1 < len(block) else None
    return None


def _where_return(src: SourceLine, node: ast.If, ctx: FixContext) -> Fix | None:
    """``if c: return a`` / ``else: return b`` (or ``return b`` right after the ``if``):
    ``return torch.where(c, a, b)``."""
    a = _returned(node.body)
    if a is None:
        return None
    last = node.end_lineno or node.lineno
    b = _returned(node.orelse) if node.orelse else None
    if not node.orelse:
        after_if = _next_statement(src.module, node)
        b = after_if.value if isinstance(after_if, ast.Return) else None
        last = (after_if.end_lineno or after_if.lineno) if after_if is not None else last
    if b is None:
        return None
    before = statement_text(src, node.lineno, last)
    after = f"return torch.where({_condition(node.test)}, {unparse(a)}, {unparse(b)})"
    return make(src, after, FixCode.WHERE_RETURN, _scalars(node.test, ctx), before=before)


def _scalars(test: ast.expr, ctx: FixContext) -> dict[str, Param]:
    """The target's Python-number arguments the test reads: they must become device tensors."""
    return {"scalars": list(sorted(names_in(test) & ctx.scalar_args))}


def _condition(test: ast.expr) -> str:
    """The test as a boolean tensor: comparisons already are; ``n % 2`` needs ``.bool()``."""
    if isinstance(test, ast.Compare):
        return unparse(test)
    if isinstance(test, ast.BoolOp):  # `and`/`or` read each side on the host: use & and |
        joint = " & " if isinstance(test.op, ast.And) else " | "
        return joint.join(f"({_condition(v)})" for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return f"~({_condition(test.operand)})"
    return f"({unparse(test)}).bool()"


def branch_fix(src: SourceLine, ctx: FixContext, kind: str) -> Fix:
    node = src.node(ast.If)
    if not isinstance(node, ast.If):
        if isinstance(src.node(ast.While), ast.While):
            return cannot(src, kind, FixReason.TENSOR_LOOP)
        return cannot(src, kind, FixReason.NO_IF)
    returned = _where_return(src, node, ctx)
    if returned is not None:
        return returned
    before = statement_text(src, node.lineno, node.end_lineno or node.lineno)
    test = node.test
    then = _assignment(node.body)
    other = _assignment(node.orelse) if node.orelse else None
    if then and (not node.orelse or (other and other[0] == then[0])):
        name, a = then
        b = other[1] if other else ast.Name(name, ast.Load())
        after = f"{name} = torch.where({_condition(test)}, {unparse(a)}, {unparse(b)})"
        return make(src, after, FixCode.WHERE_SELECT, _scalars(test, ctx), before=before)
    return _cond_fix(src, node, before, ctx)


def _cond_fix(src: SourceLine, node: ast.If, before: str, ctx: FixContext) -> Fix:
    """Both branches heavy: ``torch.cond`` captures both as sub-graphs and picks on the device."""
    assigned = sorted(
        {t.id for s in node.body + node.orelse for t in ast.walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    )
    if len(assigned) != 1:
        return cannot(src, "data-dependent-control-flow", FixReason.SEVERAL_NAMES)
    out = assigned[0]
    loaded = sorted({n.id for s in node.body + node.orelse for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - {"torch", "F"} | {out})
    params = ", ".join(loaded)

    def body(stmts: list[ast.stmt]) -> str:
        lines = [unparse(s) for s in stmts] or []
        return "\n".join("    " + ln for s in lines for ln in s.splitlines())

    after = (
        f"def _then({params}):\n{body(node.body)}\n    return {out}\n\n"
        f"def _else({params}):\n{body(node.orelse) if node.orelse else ''}{chr(10) if node.orelse else ''}    return {out}\n\n"
        f"{out} = torch.cond({unparse(node.test)}, _then, _else, ({params}{',' if len(loaded) == 1 else ''}))"
    )
    return make(src, after, FixCode.COND_BRANCHES, _scalars(node.test, ctx), before=before)
