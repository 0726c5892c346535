"""Unannotated arguments that the code itself shows to be Python numbers.

``def step(x, i): return torch.full_like(x, i)``: ``i`` has no annotation, but
``full_like`` takes its fill value as a Python scalar, so ``i`` is a number, and a caller
that passes a changing one (a step count) has it frozen into the graph. Such an argument
is judged as ``i: int`` would be. One scalar-only use is the evidence; any use as a
tensor, a container or an object (``i.shape``, ``i[0]``, ``for a in i``, ``len(i)``,
``torch.relu(i)``, ``i @ w``) vetoes it, since lint must be sure before it reports.

Only the checked function's own arguments are inferred: a followed helper's arguments
are what its caller passes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import launchprof.lint.values as v
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.facts import CallFact
from launchprof.lint.params import arguments, no_value
from launchprof.lint.values import Val

# torch.<name>(...): the positional index and keyword of an argument that must be a Python scalar.
_TORCH_SCALAR_SLOTS = {
    "torch.full": (1, "fill_value"),
    "torch.full_like": (1, "fill_value"),
    "torch.tensor": (0, "data"),
    "torch.scalar_tensor": (0, "s"),
}
# tensor.<method>(...): likewise.
_METHOD_SCALAR_SLOTS = {"fill_": (0, "value"), "new_full": (1, "fill_value")}
# These take a list as readily as a number (``torch.tensor(batch)`` in a collate function).
_DATA_FNS = frozenset({"torch.tensor"})
_COLLECTION_NAMES = frozenset({"batch", "data", "seq", "sequence", "array", "arr", "buf", "buffer"})
# Builtins that take a container or inspect an object: an argument passed to one is not a number.
_CONTAINER_BUILTINS = frozenset({"len", "isinstance", "iter", "list", "tuple", "sorted", "enumerate", "zip", "dict", "set", "hasattr", "getattr"})


def scalar_params(ref: FunctionRef, params: dict[str, Val], calls: list[CallFact]) -> dict[str, Val]:
    """The unannotated arguments of ``ref`` used only as Python numbers, as numbers from that argument."""
    found: set[str] = set()
    for call in calls:  # the scalar-only uses first: most functions have none, and this is cheap
        slot = _METHOD_SCALAR_SLOTS.get(call.method) if call.method is not None else _TORCH_SCALAR_SLOTS.get(call.path or "")
        if slot is None:
            continue
        for node in _slot_values(call.node, *slot):
            if isinstance(node, ast.Name) and not (call.path in _DATA_FNS and _reads_as_collection(node.id)):
                found.add(node.id)
    if found:
        found &= _loose_params(ref, params)
    if found:
        found -= _used_otherwise(ref.node, found, calls)
    return {name: Val(v.NUMBER, origin=name) for name in sorted(found)}


def _loose_params(ref: FunctionRef, params: dict[str, Val]) -> frozenset[str]:
    """Arguments with no annotation and no default (or ``None``) whose kind lint does not know."""
    return frozenset(
        arg.arg
        for arg, default in arguments(ref.node)
        if arg.annotation is None and no_value(default) and params.get(arg.arg, v.V_UNKNOWN).kind in (v.ARG, v.UNKNOWN)
    )


def _reads_as_collection(name: str) -> bool:
    """``ids``, ``lengths``, ``batch``: a name that says it holds several values (``pos``, ``loss`` do not)."""
    plural = name.endswith("s") and not name.endswith(("ss", "us", "is", "os"))
    return plural or name.lower() in _COLLECTION_NAMES


def _slot_values(node: ast.Call, position: int, keyword: str) -> Iterator[ast.expr]:
    """The expressions a call passes at ``position`` or as ``keyword=``."""
    if len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
        yield node.args[position]
    yield from (k.value for k in node.keywords if k.arg == keyword)


def _used_otherwise(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], calls: list[CallFact]) -> set[str]:
    """Those of ``names`` that some use shows to be a tensor, a container, a callable or an object."""
    seen: set[str] = set()
    for call in calls:
        args = call.node.args
        p = call.path or ""
        if p.startswith("torch.") and p not in _TORCH_SCALAR_SLOTS and args:
            seen.update(_names_in(args[:1], names))  # torch.relu(i): a tensor
        elif p in _CONTAINER_BUILTINS:
            seen.update(_names_in(args, names))
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute | ast.Subscript):
            seen.update(_names_in([node.value], names))
        elif isinstance(node, ast.Call):
            seen.update(_names_in([node.func], names))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            seen.update(_names_in([node.iter], names))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            seen.update(_names_in([node.left, node.right], names))
    return seen


def _names_in(exprs: list[ast.expr], names: set[str]) -> Iterator[str]:
    return (e.id for e in exprs if isinstance(e, ast.Name) and e.id in names)
