"""A Python number that changes between calls: a device tensor updated in place before each replay."""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason
from launchprof.hazards.fixes.fix_context import FixContext, cannot, make
from launchprof.hazards.fixes.branch_fixes import branch_fix
from launchprof.hazards.fixes.fix_source import SourceLine, names_in, unparse
from launchprof.model.hazard_records import Fix

# In-place ops whose Python-number keyword must become a tensor factor of the operand.
_SCALE_KEYWORDS = {"alpha", "value"}


class _ToTensor(ast.NodeTransformer):
    """``name`` -> ``name_t``; ``x.add_(g, alpha=E)`` -> ``x.add_(g * E_t)``."""

    def __init__(self, name: str, tensor: str) -> None:
        self.name, self.tensor = name, tensor

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self.tensor, node.ctx) if node.id == self.name else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        scaled = [k for k in node.keywords if k.arg in _SCALE_KEYWORDS and self.tensor in names_in(k.value)]
        if len(scaled) == 1 and node.args:
            k = scaled[0]
            last = node.args[-1]
            node.args[-1] = ast.BinOp(left=last, op=ast.Mult(), right=k.value)
            node.keywords = [x for x in node.keywords if x is not k]
        return node


def scalar_fix(src: SourceLine, ctx: FixContext, argument: str | None) -> Fix:
    if not argument:
        return cannot(src, "frozen-scalar", FixReason.ARGUMENT_UNNAMED)
    name = argument.split("[")[0].split(".")[0]
    if src.stmt is None or name not in names_in(src.stmt):
        return cannot(src, "frozen-scalar", FixReason.NAME_NOT_ON_LINE, name=name)
    if isinstance(src.stmt, (ast.If, ast.While)):
        return branch_fix(src, ctx, "frozen-scalar")
    tensor = f"{name}_t"
    rewritten = _ToTensor(name, tensor).visit(ast.parse(unparse(src.stmt)))
    after = f"{tensor}.fill_({name})  # in the caller, before each replay\n{unparse(rewritten)}  # in the step"
    return make(src, after, FixCode.SCALAR_TENSOR, {"name": name, "tensor": tensor})
