"""A host-to-device copy from pageable memory: stage through pinned memory allocated once."""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason
from launchprof.hazards.fixes.fix_context import cannot, make
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, unparse
from launchprof.model.hazard_records import Fix



def _to_device(node: ast.AST) -> ast.expr | None:
    """The host expression ``H`` of ``H.cuda()``, ``H.to('cuda')``/``H.to(device)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and call_name(node) in ("cuda", "to"):
        return node.func.value
    return None


def pageable_fix(src: SourceLine) -> Fix:
    stmt = src.stmt
    if stmt is None:
        return cannot(src, "pageable-copy", FixReason.LONGER_STATEMENT)
    for sub in ast.walk(stmt):
        host = _to_device(sub)
        if host is not None:
            base = unparse(stmt.targets[0]) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) else "staged"
            after = (
                f"# once, outside the step:\n{base}_pinned = ({unparse(host)}).pin_memory()\n"
                f"{base}_dev = torch.empty_like({base}_pinned, device='cuda')\n"
                f"# in the step:\n{unparse(_replace(stmt, sub, f'{base}_dev.copy_({base}_pinned, non_blocking=True)'))}"
            )
            return make(src, after, FixCode.PINNED_COPY)
        if isinstance(sub, ast.Call) and call_name(sub) == "copy_" and isinstance(sub.func, ast.Attribute) and sub.args:
            dest = unparse(sub.func.value)
            name = dest.replace(".", "_").replace("[", "_").replace("]", "")
            after = (
                f"# once, outside the step:\n{name}_pinned = torch.empty_like({dest}, device='cpu').pin_memory()\n"
                f"# before each replay, in the caller:\n{name}_pinned.copy_({unparse(sub.args[0])})\n"
                f"# in the step:\n{dest}.copy_({name}_pinned, non_blocking=True)"
            )
            return make(src, after, FixCode.PINNED_COPY)
    return cannot(src, "pageable-copy", FixReason.NO_COPY_CALL)


def _replace(stmt: ast.stmt, old: ast.AST, text: str) -> ast.AST:
    new = ast.parse(text, mode="eval").body

    class _Swap(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            return new if node is old else super().visit(node)

    return _Swap().visit(stmt)
