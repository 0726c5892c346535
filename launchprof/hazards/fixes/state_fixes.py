"""State the graph cannot follow: a rebound global, a mutated argument, host-side effects,
random numbers from a foreign generator."""

from __future__ import annotations

import ast

from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.hazards.fixes.fix_context import cannot, make
from launchprof.hazards.fixes.fix_source import SourceLine, call_name, dotted, source_line, unparse
from launchprof.common.source import parse_module
from launchprof.model.hazard_records import Fix

_INPLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _assigns(node: ast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name`` (a global ``name`` or an attribute ``obj.name``)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
    for t in targets:
        if (isinstance(t, ast.Name) and t.id == name) or (isinstance(t, ast.Attribute) and t.attr == name):
            return True
    return False


def _between_calls(module: ast.Module) -> list[ast.AST]:
    """Statements that run between calls of the step: inside a function, or in a loop at the
    script's top level (``for i in range(n): out = step(x); bias = bias + 1.0``)."""
    out: list[ast.AST] = []
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.While, ast.AsyncFor)):
            out.extend(n for stmt in node.body + getattr(node, "orelse", []) for n in ast.walk(stmt))
    return out


def rebinding_site(files: list[str], name: str, after_line: dict[str, int] | None = None) -> tuple[str, int] | None:
    """The first statement in ``files`` that rebinds ``name`` where it runs between calls
    (in a function, or in a top-level loop), skipping plain module-level definitions:
    ``(file, line)``."""
    for file in files:
        module = parse_module(file)
        if module is None:
            continue
        hits = sorted({n.lineno for n in _between_calls(module) if _assigns(n, name)})
        if hits:
            return file, hits[0]
    return None


def _kept_by(module: ast.Module | None, name: str) -> tuple[str, int] | None:
    """A container the script keeps ``name`` in (``history.append(bias)``): ``(holder, line)``."""
    for node in sorted(ast.walk(module) if module is not None else (), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "appendleft", "insert", "add"):
            if node.args and isinstance(node.args[-1], ast.Name) and node.args[-1].id == name:
                return unparse(node.func.value), node.lineno
    return None


def rebinding_fix(file: str, line: int, name: str) -> Fix:
    """``bias = bias + 1.0`` -> ``bias.add_(1.0)``; ``w = new()`` -> ``w.copy_(new())``.
    An in-place update is seen through every reference to the tensor: a list the script
    keeps ``bias`` in would then hold one tensor many times, which the note says."""
    src = source_line(file, line)
    stmt = src.stmt
    if stmt is None:
        return cannot(src, "reallocated-input", FixReason.REBINDING_IN_STATEMENT)
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else getattr(stmt, "target", None)
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else None
    if target is None or value is None:
        return cannot(src, "reallocated-input", FixReason.NOT_PLAIN_ASSIGNMENT)
    lhs = unparse(target)
    if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _INPLACE:
        after = f"{lhs}.{_INPLACE[type(stmt.op)]}({unparse(value)})"
    elif isinstance(value, ast.BinOp) and unparse(value.left) == lhs and type(value.op) in _INPLACE:
        after = f"{lhs}.{_INPLACE[type(value.op)]}({unparse(value.right)})"
    else:
        after = f"{lhs}.copy_({unparse(value)})"
    params: dict[str, Param] = {"line": line, "name": name}
    kept = _kept_by(src.module, lhs) if isinstance(target, ast.Name) else None
    if kept is not None:
        params |= {"kept_by": kept[0], "kept_line": kept[1]}
    return make(src, after, FixCode.REBIND_IN_PLACE, params)


def mutation_fix(src: SourceLine, argument: str) -> Fix:
    """An argument mutated in place that is a new tensor each call: the caller's copy goes stale."""
    after = (
        f"# in the caller: allocate `{argument}` once and pass that same tensor every call\n"
        f"# or, after each replay: {argument}.copy_(static_{argument})"
    )
    return make(src, after, FixCode.MUTATED_ARGUMENT, {"argument": argument})


def effect_fix(src: SourceLine) -> Fix:
    stmt = src.stmt
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and type(stmt.op) in _INPLACE:
        name = stmt.target.id
        after = f"{name}_t.{_INPLACE[type(stmt.op)]}({unparse(stmt.value)})  # {name}_t = torch.zeros((), device='cuda') once"
        return make(src, after, FixCode.DEVICE_COUNTER, {"name": name})
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = call_name(stmt.value)
        if name in ("append", "extend", "print", "info", "debug", "warning", "log"):
            return make(src, f"# (moved) in the caller, after each run(...): {src.code}", FixCode.MOVED_TO_CALLER)
    return cannot(src, "host-side-effect", FixReason.NOT_MOVABLE_EFFECT)


_NUMPY_RNG = {"normal": "torch.randn", "randn": "torch.randn", "standard_normal": "torch.randn", "rand": "torch.rand", "random": "torch.rand", "uniform": "torch.rand"}


def rng_fix(src: SourceLine) -> Fix:
    """``np.random.normal(size=N)`` -> ``torch.randn(N, device='cuda')``: the graph's own generator."""
    stmt = src.stmt
    if stmt is None:
        return cannot(src, "rng-state", FixReason.LONGER_STATEMENT)
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call) and dotted(sub.func).rsplit(".", 1)[-1] in _NUMPY_RNG and "random" in dotted(sub.func):
            size = next((k.value for k in sub.keywords if k.arg == "size"), None)
            if size is None and sub.args and dotted(sub.func).endswith(("rand", "randn")):
                size = ast.Tuple(elts=list(sub.args), ctx=ast.Load())
            shape = unparse(size) if size is not None else "()"
            draw = f"{_NUMPY_RNG[dotted(sub.func).rsplit('.', 1)[-1]]}({shape}, device='cuda')"
            target = unparse(stmt.targets[0]) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            after = f"{target} = {draw}" if target else draw
            return make(src, after, FixCode.CUDA_RNG)
    return cannot(src, "rng-state", FixReason.NO_HOST_RNG_CALL)
