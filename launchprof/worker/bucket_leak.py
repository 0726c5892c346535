"""Finding the line where padding leaks into the real rows' results.

A padded call changes the real rows only through an op that mixes rows along the padded
dimension: a reduction over it (``h.mean(dim=0)`` over the batch), a softmax or norm
along it, a matrix product that contracts it. The step runs twice eagerly under a
``TorchFunctionMode``, once on the real call and once padded; the first such op whose
reduced dimension has a different size in the two runs is the leak, named at the user's
line. Runs only after a padded replay was found to differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from launchprof.worker.frames import stack_site

# Ops that mix rows along a dimension, and where their dimension argument sits.
_DIM_ARG = {
    "mean": 1, "sum": 1, "nansum": 1, "nanmean": 1, "prod": 1, "logsumexp": 1, "var": 1, "std": 1,
    "var_mean": 1, "std_mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1, "argmin": 1,
    "median": 1, "all": 1, "any": 1, "count_nonzero": 1, "softmax": 1, "log_softmax": 1, "cumsum": 1,
    "cumprod": 1, "normalize": 2, "norm": 2,
}
_CONTRACT = {"matmul", "mm", "bmm", "__matmul__", "__rmatmul__"}
_LAST_DIMS = {"layer_norm", "rms_norm"}
_ALL_BUT_CHANNEL = {"batch_norm"}


@dataclass
class OpRecord:
    name: str
    shape: tuple[int, ...]
    dims: tuple[int, ...]  # the dimensions the op mixes, non-negative
    site: dict[str, Any] | None


def _dims(name: str, args: tuple, kwargs: dict, ndim: int) -> tuple[int, ...] | None:
    """The dimensions ``name`` mixes rows along, or None if it mixes none."""
    if name in _CONTRACT:
        return (ndim - 1,) if ndim else None
    if name in _LAST_DIMS:
        shape = args[1] if len(args) > 1 else kwargs.get("normalized_shape", ())
        k = len(shape) if isinstance(shape, (list, tuple, torch.Size)) else 1
        return tuple(range(ndim - k, ndim))
    if name in _ALL_BUT_CHANNEL:
        return tuple(d for d in range(ndim) if d != 1)
    if name not in _DIM_ARG:
        return None
    pos = _DIM_ARG[name]
    dim = kwargs.get("dim", args[pos] if len(args) > pos else None)
    if name == "normalize" and "dim" not in kwargs and len(args) <= pos:
        dim = 1
    if isinstance(dim, torch.Tensor):  # torch.max(a, b): elementwise, mixes nothing
        return None
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (list, tuple)) else (dim,)
    return tuple(int(d) % ndim for d in dims if isinstance(d, int)) if ndim else ()


class OpTrace(TorchFunctionMode):
    """Records every op that mixes rows, with its input shape and the user's line."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[OpRecord] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if first is not None:
            dims = _dims(name, args, kwargs, first.dim())
            if dims is not None:
                site = stack_site(2)
                self.ops.append(OpRecord(name.strip("_"), tuple(first.shape), dims, site.as_dict() if site else None))
        return func(*args, **kwargs)


def traced(call: Callable[[], Any]) -> list[OpRecord]:
    with OpTrace() as trace:
        call()
    return trace.ops


def leaking_ops(real: list[OpRecord], padded: list[OpRecord]) -> list[OpRecord]:
    """Ops of the padded run that mix rows along a dimension whose size differs from the
    real run's: padding reaches the real rows there. One per user line, in order."""
    out: list[OpRecord] = []
    lines = set()
    for a, b in zip(real, padded):
        if a.name != b.name or len(a.shape) != len(b.shape):
            break  # the two runs took different paths: stop comparing
        if any(a.shape[d] != b.shape[d] for d in b.dims if d < len(a.shape)):
            key = (b.site or {}).get("file"), (b.site or {}).get("line")
            if key not in lines:
                lines.add(key)
                out.append(b)
    return out


def locate_leak(run_real: Callable[[], Any], run_padded: Callable[[], Any]) -> list[OpRecord]:
    """The leaking ops: each callable runs the step once eagerly (the caller restores the
    state around them)."""
    return leaking_ops(traced(run_real), traced(run_padded))
