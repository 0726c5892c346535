"""Where the walk of a step's state starts (worker/reach.py): the globals and closure cells
its code names (through ``functools.wraps`` wrappers, and through the functions of the
user's own files that it names, which reach globals of their own), its bound ``self``, and
the arguments of its calls.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

import torch

from launchprof.worker.frames import is_installed, is_internal
from launchprof.worker.observe import code_names, wrapper_chain

MAX_FUNCTIONS = 64  # user functions followed from the target
MAX_HOPS = 3  # calls deep: the target names f, f names g, g names h


def _is_user_function(value: Any) -> bool:
    code = getattr(value, "__code__", None)
    if not isinstance(value, types.FunctionType) or code is None:
        return False
    name = code.co_filename
    return not is_internal(name) and not is_installed(name)


def target_of(fn: Callable[..., Any]) -> tuple[Any, Any]:
    """(function, bound self or None) of a target: a function, a bound method, a module."""
    target = getattr(fn, "__func__", fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, torch.nn.Module):
        owner, target = fn, getattr(type(fn).forward, "__func__", type(fn).forward)
    return target, owner


def code_roots(fn: Callable[..., Any]) -> list[tuple[str, Any]]:
    """Globals and closure cells the target's code names (and the code of the user's
    functions it names, up to ``MAX_HOPS`` deep): name -> value, each value once."""
    target, owner = target_of(fn)
    roots: list[tuple[str, Any]] = []
    seen_values: set[int] = set()
    done: set[int] = set()
    todo: list[tuple[Any, int]] = [(layer, 0) for layer in wrapper_chain(target)]
    while todo and len(done) < MAX_FUNCTIONS:
        func, hops = todo.pop(0)
        code = getattr(func, "__code__", None)
        if code is None or id(func) in done:
            continue
        done.add(id(func))
        glb = getattr(func, "__globals__", {})
        named = [(n, glb[n]) for n in sorted(code_names(code)) if n in glb]
        for cell_name, cell in zip(code.co_freevars, getattr(func, "__closure__", None) or (), strict=False):
            try:
                named.append((cell_name, cell.cell_contents))
            except ValueError:  # an empty cell
                pass
        for name, value in named:
            if _is_user_function(value):
                if hops < MAX_HOPS:
                    todo.append((value, hops + 1))
                continue
            if id(value) not in seen_values:
                seen_values.add(id(value))
                roots.append((name, value))
    if owner is not None:
        roots.append(("self", owner))
    return roots


def step_roots(fn: Callable[..., Any], calls: Iterable[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The code's roots, then each call's arguments by parameter name (``calls``: the
    ``bind_arguments`` of each call)."""
    roots = code_roots(fn)
    for named in calls:
        roots += list(named.items())
    return roots
