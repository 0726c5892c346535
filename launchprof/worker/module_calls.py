"""The modules a step calls directly, with each call's arguments and the user's names for them.

One call of the step runs under a global forward pre-hook and forward hook (torch's
``register_module_forward_pre_hook``): a module entered while no other module is running is
one the step calls itself (``out = model(x)``), not a submodule. For each, the arguments
are cloned as samples (same shape, dtype and ``requires_grad``: what the module's graph
will be captured on), with the grad mode and autocast state of the call, and the user's
line that calls it is read for the names to paste (``model``, ``x``). The hooks are
removed before anything is graphed: ``make_graphed_callables`` refuses hooked modules.
"""

from __future__ import annotations

import ast
import linecache
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import torch

from launchprof.worker.frames import Site, frame_site, is_internal
from launchprof.worker.graphed_module import cuda_autocast
from launchprof.worker.trees import leaves, map_tree


@dataclass
class ModuleCall:
    """A module the step called while no other module was running."""

    module: torch.nn.Module
    samples: tuple  # the call's positional arguments, cloned (tensors keep requires_grad)
    grad_enabled: bool
    autocast: str | None  # the dtype of CUDA autocast at the call, None when off
    site: Site | None
    expr: str  # the module as the user's line names it (`model`, `self.net`), else its class
    arg_exprs: list[str | None] = field(default_factory=list)
    keywords: bool = False  # the line passes keyword arguments
    tensors_only: bool = True
    calls: int = 1  # calls of this module in the step

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.module.parameters())


def sample_of(value: Any) -> Any:
    """A tensor argument as a capture sample: a new leaf with the same data and ``requires_grad``,
    a normal tensor even from an inference-mode call (the graph copies new inputs into it)."""
    if not isinstance(value, torch.Tensor):
        return value
    with torch.inference_mode(False):
        return value.detach().clone().requires_grad_(value.requires_grad)


def user_frame(frame: FrameType | None) -> FrameType | None:
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def record_module_calls(step: Callable[[], Any]) -> list[ModuleCall]:
    """Run ``step`` once with the hooks on; the modules it called directly, first call first."""
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    found: dict[int, ModuleCall] = {}
    depth = [0]

    def pre(module: torch.nn.Module, args: tuple) -> None:
        if depth[0] == 0:
            seen = found.get(id(module))
            if seen is not None:
                seen.calls += 1
            else:
                found[id(module)] = _call_of(module, args, user_frame(sys._getframe(1)))
        depth[0] += 1

    def post(module: torch.nn.Module, args: tuple, out: Any) -> None:
        depth[0] = max(depth[0] - 1, 0)

    handles = [register_module_forward_pre_hook(pre), register_module_forward_hook(post)]
    try:
        step()
    finally:
        for handle in handles:
            handle.remove()
    return list(found.values())


def _call_of(module: torch.nn.Module, args: tuple, frame: FrameType | None) -> ModuleCall:
    names = call_names(frame, module)
    return ModuleCall(
        module=module,
        samples=map_tree(args, sample_of),
        grad_enabled=torch.is_grad_enabled(),
        autocast=cuda_autocast(),
        site=frame_site(frame),
        expr=names[0] or type(module).__name__,
        arg_exprs=names[1],
        keywords=names[2],
        tensors_only=all(isinstance(v, torch.Tensor) for _, v in leaves(args)),
    )


def call_names(frame: FrameType | None, module: torch.nn.Module) -> tuple[str | None, list[str | None], bool]:
    """(module expression, argument expressions, keywords passed) of the call of ``module``
    on the frame's current statement; names alone when the statement cannot be read."""
    if frame is None:
        return None, [], False
    statement = _statement(frame.f_code.co_filename, frame.f_lineno or 0)
    for node in ast.walk(statement) if statement is not None else ():
        if isinstance(node, ast.Call) and _resolve(node.func, frame) is module:
            args = [None if isinstance(a, ast.Starred) else ast.unparse(a) for a in node.args]
            return ast.unparse(node.func), args, bool(node.keywords)
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if value is module and not name.startswith("_"):
                return name, [], False
    return None, [], False


def _statement(file: str, line: int) -> ast.stmt | None:
    """The innermost simple statement of ``file`` that spans ``line``."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)))
    except (SyntaxError, ValueError):
        return None
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _resolve(expr: ast.expr, frame: FrameType) -> Any:
    """The object a name or dotted name refers to in ``frame``; None for anything else."""
    if isinstance(expr, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if expr.id in scope:
                return scope[expr.id]
        return None
    if isinstance(expr, ast.Attribute):
        owner = _resolve(expr.value, frame)
        try:
            return getattr(owner, expr.attr, None) if owner is not None else None
        except Exception:  # a property of the user's that raises
            return None
    return None
