"""Host reads of device values inside the step, written out of the line.

- ``x / peak.item()``, ``float(t)``: keep the value on the device (drop the read; Python
  ``max``/``min`` against a number becomes ``clamp_min``/``clamp_max``);
- ``.cpu()``/``.tolist()``/``.numpy()``: keep the device tensor in the step and read it after
  the replay, outside the target;
- ``torch.cuda.synchronize()``: out of the target, after the replay;
- ``if tensor``: :mod:`launchprof.hazards.fixes.branch_fixes`;
- ``nonzero``/boolean masks: :mod:`launchprof.hazards.fixes.mask_fixes`.
"""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.hazards.fixes.fix_context import FixContext, cannot, make, statement_text
from launchprof.hazards.fixes.branch_fixes import branch_fix
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, dotted, unparse
from launchprof.hazards.fixes.later_uses import clamp_of, later_uses
from launchprof.hazards.fixes.mask_fixes import mask_fix
from launchprof.model.hazard_records import Fix

_READS = {"item"}
_CASTS = {"float", "int", "bool"}
_TO_HOST = {"cpu", "tolist", "numpy"}
_SYNC_CALLS = {"torch.cuda.synchronize", "torch.cuda.current_stream().synchronize", "torch.cuda.current_device().synchronize"}


class _KeepOnDevice(ast.NodeTransformer):
    """Drops host reads (``.item()``, ``float(...)``) and device-to-host copies from an expression."""

    def __init__(self, drop: set[str]) -> None:
        self.drop = drop
        self.changed: list[str] = []

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = call_name(node)
        if isinstance(node.func, ast.Attribute) and name in self.drop and not node.args and not node.keywords:
            self.changed.append(f".{name}()")
            return node.func.value
        if isinstance(node.func, ast.Name) and name in _CASTS and len(node.args) == 1 and not node.keywords:
            self.changed.append(f"{name}()")
            return node.args[0]
        if isinstance(node.func, ast.Name) and name in ("max", "min") and len(node.args) == 2 and not node.keywords:
            return clamp_of(node) or node
        return node


def sync_fix(src: SourceLine, ctx: FixContext, op: str | None, what: str) -> Fix:
    stmt = src.stmt
    if stmt is None:
        return cannot(src, "hidden-sync", FixReason.LONGER_STATEMENT)
    if isinstance(stmt, (ast.If, ast.While)) or (op == "_local_scalar_dense" and isinstance(stmt, ast.Assert)):
        return branch_fix(src, ctx, "hidden-sync")
    if op in ("nonzero", "index", "masked_select") or "mask" in what or "nonzero" in src.code:
        return mask_fix(src, ctx)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and dotted(stmt.value.func) in _SYNC_CALLS:
        after = f"# (nothing here) call {src.code} in the caller, after the replay"
        return make(src, after, FixCode.SYNC_OUTSIDE)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and call_name(stmt.value) == "print":
        return make(src, "# (moved) print it in the caller, after the replay", FixCode.PRINT_OUTSIDE)
    to_host = _TO_HOST & {n.func.attr for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    drop = set(_READS) | to_host
    walker = _KeepOnDevice(drop)
    tree = walker.visit(ast.parse(unparse(stmt)))
    changed = sorted(set(walker.changed))
    if not changed:
        return cannot(src, "hidden-sync", FixReason.NO_HOST_READ)
    if not to_host:
        paired = _with_later_uses(src, stmt, tree, changed)
        if paired is not None:
            return paired
    return make(src, unparse(tree), FixCode.TO_HOST_AFTER_REPLAY if to_host else FixCode.KEEP_ON_DEVICE, {"reads": list(changed)})


def _with_later_uses(src: SourceLine, stmt: ast.stmt, tree: ast.Module, reads: list[str]) -> Fix | None:
    """``m = peak.item()`` whose ``m`` a later line uses as a Python number: both lines
    rewritten (``return x / peak.clamp_min(1e-06)``), or no fix when a use cannot be; None
    when the later uses work on a 0-d tensor as they are."""
    fn = src.function
    if fn is None or src.line is None or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    name, line = stmt.targets[0].id, src.line
    uses = later_uses(fn, name, line)
    host = next((u for u in uses if u.rewritten is None), None)
    if host is not None:
        return cannot(src, "hidden-sync", FixReason.HOST_VALUE_USED, name=name, use_line=host.line)
    if not any(u.changed for u in uses):
        return None
    kept = tree.body[0]
    value = kept.value if isinstance(kept, ast.Assign) else None
    inline = value if isinstance(value, (ast.Name, ast.Attribute)) and len(uses) <= 2 else None
    if inline is not None:  # `m = peak` is only another name for `peak`: write `peak` where `m` was
        uses = later_uses(fn, name, line, inline)
    shown = [u for u in uses if u.changed]
    before = "\n".join([src.code, *(statement_text(src, u.line, u.end_line) for u in shown)])
    after = "\n".join([*([] if inline is not None else [unparse(tree)]), *(str(u.rewritten) for u in shown)])
    spans = [line, *(n for u in shown for n in range(u.line, u.end_line + 1))]
    params: dict[str, Param] = {
        "reads": list(reads), "name": name, "line": line, "use_lines": [u.line for u in shown],
        "value": unparse(inline) if inline is not None else None, "before_lines": spans,
    }
    return make(src, after, FixCode.KEEP_ON_DEVICE_LATER_USE, params, before=before)
