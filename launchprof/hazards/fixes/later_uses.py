"""The later uses of a value a fix keeps on the device.

``m = peak.item()`` fixed as ``m = peak`` leaves ``m`` a 0-d tensor; a later
``max(m, 1e-6)`` then calls ``bool()`` on it and capture fails again. So a fix that drops a
host read at an assignment reads the rest of the function: uses in tensor arithmetic stay,
Python ``max``/``min`` against a number become ``clamp_min``/``clamp_max``, and any other
use as a Python number (an ``if``, a cast, ``range``, an index, a format) means the fix is
not written for the assignment alone.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from launchprof.hazards.fixes.fix_source import FunctionNode, call_name, dotted, unparse

# Calls that read a 0-d tensor back to the host (or call bool() on it).
_HOST_CALLS = {"int", "float", "bool", "range", "len", "print", "str", "format", "round", "max", "min", "list", "tuple", "divmod"}
_HOST_MODULES = ("math.", "np.", "numpy.", "random.")
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


@dataclass(frozen=True)
class Use:
    """One later statement that reads the name: its lines and the rewritten text, or the
    line where it is used as a Python number (``rewritten`` None)."""

    line: int
    end_line: int
    rewritten: str | None
    changed: bool  # the rewrite differs from the statement


def clamp_of(node: ast.Call) -> ast.AST | None:
    """``max(1e-6, t)`` -> ``t.clamp_min(1e-6)``: a Python bound against a device value."""
    name = call_name(node)
    if not isinstance(node.func, ast.Name) or name not in ("max", "min") or len(node.args) != 2 or node.keywords:
        return None
    a, b = node.args
    number = next((x for x in (a, b) if isinstance(x, ast.Constant) and isinstance(x.value, (int, float))), None)
    if number is None:
        return None
    other = b if number is a else a
    meth = "clamp_min" if name == "max" else "clamp_max"
    return ast.Call(func=ast.Attribute(value=other, attr=meth, ctx=ast.Load()), args=[number], keywords=[])


class _Clamp(ast.NodeTransformer):
    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if any(isinstance(n, ast.Name) and n.id == self.name for n in ast.walk(node)):
            return clamp_of(node) or node
        return node


class _Inline(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.value) if node.id == self.name and isinstance(node.ctx, ast.Load) else node


def _host_context(tree: ast.AST, name: str) -> bool:
    """Whether ``name`` is read where Python needs a number: a branch test, ``and``/``or``/
    ``not``, a host call, a format, an index."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        child, up = node, parents.get(node)
        while up is not None:
            if isinstance(up, _TESTS) and child is up.test:
                return True
            if isinstance(up, (ast.BoolOp, ast.FormattedValue)) or (isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.Not)):
                return True
            if isinstance(up, ast.Subscript) and child is up.slice:
                return True
            if isinstance(up, ast.Call) and child is not up.func:
                callee = dotted(up.func)
                if (isinstance(up.func, ast.Name) and up.func.id in _HOST_CALLS) or callee.startswith(_HOST_MODULES):
                    return True
            if isinstance(up, ast.stmt):
                break
            child, up = up, parents.get(up)
    return False


def _header(stmt: ast.stmt) -> ast.AST | None:
    """The part of a statement that runs as its own line: a compound statement's header."""
    if isinstance(stmt, (ast.If, ast.While)):
        return ast.Expr(value=ast.IfExp(test=stmt.test, body=ast.Constant(0), orelse=ast.Constant(0)))
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return ast.Expr(value=ast.Call(func=ast.Name("iter", ast.Load()), args=[stmt.iter], keywords=[]))
    if isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    return stmt


def _stores(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def later_uses(fn: FunctionNode, name: str, after: int, inline: ast.expr | None = None) -> list[Use]:
    """Each statement after line ``after`` in ``fn`` that reads ``name``, until it is bound
    again: rewritten for a device value, or marked as a use the device value cannot serve."""
    stmts = sorted((s for s in ast.walk(fn) if isinstance(s, ast.stmt) and s is not fn and s.lineno > after), key=lambda s: s.lineno)
    out: list[Use] = []
    for stmt in stmts:
        head = _header(stmt)
        if head is None:
            continue
        reads = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(head))
        if reads:
            out.append(_rewritten(stmt, head, name, inline))
        if _stores(stmt, name):
            break
    return out


def _rewritten(stmt: ast.stmt, head: ast.AST, name: str, inline: ast.expr | None) -> Use:
    end = stmt.end_lineno or stmt.lineno
    if head is not stmt:  # a branch or loop header on the value: not a rewrite of one line
        return Use(stmt.lineno, end, None, False)
    tree = _Clamp(name).visit(copy.deepcopy(stmt))
    if _host_context(tree, name):
        return Use(stmt.lineno, end, None, False)
    if inline is not None:
        tree = _Inline(name, inline).visit(tree)
    text = unparse(tree)
    return Use(stmt.lineno, end, text, text != unparse(stmt))
