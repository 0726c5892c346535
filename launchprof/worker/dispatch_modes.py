"""Entering a dispatch mode without importing torch._dynamo.

torch wraps every ``TorchDispatchMode`` subclass's ``__torch_dispatch__`` in
``torch._disable_dynamo``, which imports torch._dynamo (and with it sympy, torch.fx's
symbolic shapes and, on a CUDA build, triton) at the first op the mode sees: 1.5 s on a CPU
build and over 6 s on the H200 (tests/data: an op recorder's first call). Nothing can be
compiling while torch._dynamo is not imported, so the wrapper has nothing to disable then:
for the length of the block, the wrapped function is told that it is its own disabled form
(the attribute the wrapper caches it under), and the wrapper calls it directly. Where
torch._dynamo is already imported, or this torch wraps differently, nothing is changed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

_CACHE = "__dynamo_disable"  # where torch._compile._disable_dynamo's wrapper caches the disabled function


def _raw_dispatch(mode_type: type) -> Any:
    """The mode's own ``__torch_dispatch__`` under torch's wrapper, or None."""
    for klass in mode_type.__mro__:
        wrapped = klass.__dict__.get("__torch_dispatch__")
        if wrapped is not None:
            return getattr(wrapped, "__wrapped__", None)
    return None


@contextlib.contextmanager
def without_dynamo_import(*mode_types: type) -> Iterator[None]:
    """Modes of ``mode_types`` entered in the block do not import torch._dynamo."""
    patched: list[Any] = []
    if "torch._dynamo" not in sys.modules:
        for mode_type in mode_types:
            raw = _raw_dispatch(mode_type)
            if raw is not None and not hasattr(raw, _CACHE):
                setattr(raw, _CACHE, raw)
                patched.append(raw)
    try:
        yield
    finally:
        for raw in patched:
            with contextlib.suppress(AttributeError):
                delattr(raw, _CACHE)
