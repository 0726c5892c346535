"""The kinds of a function's arguments, from annotations, defaults and names.

A target's arguments are what the graph is captured with: a tensor argument is a
static input, a Python number argument is frozen at capture. Lint decides which is
which from what the source says: ``x: torch.Tensor``, ``lr: float``, ``scale=0.5``,
or a name that is a number by convention (``lr``, ``step``).
"""

from __future__ import annotations

import ast

import launchprof.lint.values as v
from launchprof.lint.definitions import FunctionRef, is_number_constant
from launchprof.lint.modules import ModuleInfo
from launchprof.lint.values import Val

_SEQUENCES = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "Iterable", "Iterator"})


def annotation_kind(ann: ast.expr | None, module: ModuleInfo) -> str | None:
    """``"tensor"``, ``"tensors"``, ``"number"``, ``"meta"`` (bool, str) or None for an annotation.

    Names resolve through the module's imports: ``cute.Tensor`` is not a torch tensor.
    """
    if ann is None:
        return None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(ann, ast.Subscript):
        outer = v.terminal_name(ann.value)
        if outer == "Optional":
            return annotation_kind(ann.slice, module)
        inner = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) and ann.slice.elts else ann.slice
        if outer in _SEQUENCES and annotation_kind(inner, module) == "tensor":
            return "tensors"  # list[Tensor]: iterating gives tensors
        return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        if isinstance(ann.right, ast.Constant) and ann.right.value is None:
            return annotation_kind(ann.left, module)
        if isinstance(ann.left, ast.Constant) and ann.left.value is None:
            return annotation_kind(ann.right, module)
        left = annotation_kind(ann.left, module)
        return left if left == annotation_kind(ann.right, module) else None
    if not isinstance(ann, ast.Name | ast.Attribute):
        return None
    path = module.static_path(ann)
    if path in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return "tensor"
    if path in ("int", "float"):
        return "number"
    if path in ("bool", "str"):
        return "meta"
    return None


def no_value(default: ast.expr | None) -> bool:
    """No default, or ``None`` (``temperature=None``: a number when given)."""
    return default is None or (isinstance(default, ast.Constant) and default.value is None)


def arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr | None]]:
    """Every named argument with its default (None when it has none)."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    return list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))


_ANNOTATED = {"tensor": v.V_TENSOR, "tensors": v.V_TENSORS, "meta": v.V_META}


def root_params(ref: FunctionRef, is_target: bool) -> dict[str, Val]:
    """Kinds of a checked function's own arguments.

    Annotated ``Tensor`` -> tensor; annotated int/float, a numeric default, or a name
    that is a number by convention (``lr``, ``step``) -> a number from this argument.
    Other unannotated arguments of a *target* are tensors in practice (ARG); of any
    other function (``--all``) they stay unknown.
    """
    params: dict[str, Val] = {}
    for i, (arg, default) in enumerate(arguments(ref.node)):
        if i == 0 and ref.is_method:
            params[arg.arg] = Val(v.SELF, ref=ref.cls)
            continue
        kind = annotation_kind(arg.annotation, ref.module)
        if kind in _ANNOTATED:
            params[arg.arg] = _ANNOTATED[kind]
        elif kind == "number" or (kind is None and (is_number_constant(default) or (no_value(default) and arg.arg in v.NUMBER_NAMES))):
            params[arg.arg] = Val(v.NUMBER, origin=arg.arg)
        elif kind is None and default is None and arg.annotation is None and is_target:
            params[arg.arg] = v.V_ARG
        else:
            params[arg.arg] = _model_annotation(arg.annotation, ref.module)
    return params


def _model_annotation(ann: ast.expr | None, module: ModuleInfo) -> Val:
    """``model: nn.Module`` or ``model: Net``: calling the argument runs a module, which gives tensors."""
    if not isinstance(ann, ast.Name | ast.Attribute):
        return v.V_UNKNOWN
    val = module.static_val(ann, host_ok=False)
    return val if val.kind in (v.INSTANCE, v.TORCHMOD) else v.V_UNKNOWN


def callee_params(ref: FunctionRef, bound: dict[str, Val]) -> dict[str, Val]:
    """Kinds of a followed function's arguments: what the call site passed, else the annotation."""
    params: dict[str, Val] = {}
    for arg, default in arguments(ref.node):
        kind = annotation_kind(arg.annotation, ref.module)
        if kind in _ANNOTATED:
            params[arg.arg] = _ANNOTATED[kind]
        elif kind == "number" or is_number_constant(default):
            params[arg.arg] = v.V_LIT  # a constant unless the caller passes its own number
        else:
            params[arg.arg] = _model_annotation(arg.annotation, ref.module)
    params.update(bound)
    return params
