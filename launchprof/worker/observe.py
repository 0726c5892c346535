"""Observing a target's calls: what it was given, and which state it reads and writes.

Observations are plain dicts written to the event log; the hazard rules in the CLI
process turn them into findings (frozen scalars, reallocated inputs, dynamic shapes).
"""

from __future__ import annotations

import inspect
import numbers
import types
from collections.abc import Callable
from typing import Any

import torch

from launchprof.worker.trees import leaves

MAX_REPR = 80


def bind_arguments(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    """Map the call's values to parameter names, so findings can say ``lr`` not ``args[1]``."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        named = {f"args[{i}]": a for i, a in enumerate(args)}
        named.update(kwargs)
        return named
    out: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        param = bound.signature.parameters[name]
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            for i, v in enumerate(value):
                out[f"{name}[{i}]"] = v
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


def describe_leaf(value: Any) -> dict[str, Any]:
    if isinstance(value, torch.Tensor):
        return {
            "kind": "tensor",
            "shape": list(value.shape),
            "dtype": str(value.dtype).removeprefix("torch."),
            "device": str(value.device),
            "ptr": value.data_ptr(),
            "bytes": value.numel() * value.element_size(),
            "requires_grad": bool(value.requires_grad),
        }
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {"kind": "const", "type": type(value).__name__, "value": value if not isinstance(value, str) else value[:MAX_REPR]}
    if isinstance(value, numbers.Number):
        return {"kind": "scalar", "type": type(value).__name__, "value": value if isinstance(value, (int, float)) else str(value)}
    if isinstance(value, torch.Generator):
        return {"kind": "generator", "type": "torch.Generator", "device": str(value.device)}
    return {"kind": "object", "type": type(value).__qualname__}


def describe_call(named: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per leaf of the call's arguments, named by path."""
    records = []
    for name, value in named.items():
        if isinstance(value, torch.nn.Module):
            records.append({"path": name, "kind": "module", "type": type(value).__qualname__})
            continue
        for path, leaf in leaves(value, name):
            records.append({"path": path, **describe_leaf(leaf)})
    return records


def call_signature(records: list[dict[str, Any]]) -> tuple:
    """What must match for a call to replay a captured graph: structure, shapes, dtypes, devices."""
    sig = []
    for r in records:
        if r["kind"] == "tensor":
            sig.append((r["path"], "t", tuple(r["shape"]), r["dtype"], r["device"]))
        elif r["kind"] in ("scalar", "const"):
            sig.append((r["path"], r["kind"]))
        else:
            sig.append((r["path"], r["kind"], r.get("type")))
    return tuple(sig)


def scalar_values(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {r["path"]: r.get("value") for r in records if r["kind"] in ("scalar", "const")}


def referenced_state(fn: Callable[..., Any]) -> dict[str, torch.Tensor]:
    """CUDA tensors the target can read besides its arguments: globals it names (and the
    parameters and buffers of modules among them), and tensors on its bound ``self``.

    These are what the graph freezes by address: a rebinding shows up as a new pointer,
    an in-place update as a new ``_version``.
    """
    state: dict[str, torch.Tensor] = {}
    target = getattr(fn, "__func__", fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, torch.nn.Module):
        owner, target = fn, getattr(type(fn).forward, "__func__", type(fn).forward)

    def add_value(name: str, value: Any) -> None:
        if isinstance(value, torch.Tensor):
            if value.is_cuda:
                state[name] = value
        elif isinstance(value, torch.nn.Module):
            for sub, t in list(value.named_parameters()) + list(value.named_buffers()):
                if t.is_cuda:
                    state[f"{name}.{sub}"] = t
        elif isinstance(value, torch.optim.Optimizer):
            # Moments and step counts advance every step: a validation must undo them too.
            for i, per_param in enumerate(value.state.values()):
                for key, t in per_param.items():
                    if isinstance(t, torch.Tensor) and t.is_cuda:
                        state[f"{name}.state[{i}][{key!r}]"] = t
        elif isinstance(value, (list, tuple, dict)):
            # Caches kept in containers (a list of KV tensors per layer).
            for path, leaf in leaves(value, name):
                if isinstance(leaf, torch.Tensor) and leaf.is_cuda and len(state) < 10_000:
                    state[path] = leaf

    for layer in wrapper_chain(target):
        code = getattr(layer, "__code__", None)
        glb = getattr(layer, "__globals__", {})
        if code is None:
            continue
        for name in code_names(code):
            if name in glb:
                add_value(name, glb[name])
        for cell_name, cell in zip(code.co_freevars, getattr(layer, "__closure__", None) or (), strict=False):
            try:
                add_value(cell_name, cell.cell_contents)
            except ValueError:
                pass
    if owner is not None:
        if isinstance(owner, torch.nn.Module):
            add_value("self", owner)
        for attr, value in list(getattr(owner, "__dict__", {}).items()):
            if not attr.startswith("_"):
                add_value(f"self.{attr}", value)
    return state


def wrapper_chain(fn: Any, limit: int = 16) -> list[Any]:
    """``fn`` and every function it wraps (``functools.wraps``'s ``__wrapped__``): a target
    decorated with ``@torch.no_grad()`` or a timing decorator names its globals (a KV cache,
    a model) in the wrapped function, not in the wrapper."""
    chain = [fn]
    while len(chain) < limit:
        inner = getattr(chain[-1], "__wrapped__", None)
        if inner is None or any(inner is seen for seen in chain):
            break
        chain.append(getattr(inner, "__func__", inner))
    return chain


def module_state(named: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Parameters and buffers of modules passed as arguments (``self`` of ``Net.forward``)."""
    state: dict[str, torch.Tensor] = {}
    for name, value in named.items():
        if isinstance(value, torch.nn.Module):
            for sub, t in list(value.named_parameters()) + list(value.named_buffers()):
                if t.is_cuda:
                    state[f"{name}.{sub}"] = t
    return state


def code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names
