"""One module's forward and backward as CUDA graphs (``torch.cuda.make_graphed_callables``),
switchable against its own forward, and put back exactly as it was.

``make_graphed_callables`` changes the module in place: it sets an instance attribute
``forward`` that replays the graphs while the module's training flag is what it was at
capture. launchprof must leave the user's module as it found it, so the instance
dictionary's ``forward`` entry is saved first and restored (or removed) after. In between,
the entry is a switch: the same module, called by the user's own step, runs its eager
forward or its graphs, so the two are timed through the same code path.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

_ABSENT = object()

Make = Callable[[torch.nn.Module, tuple], Any]


def has_hooks(module: torch.nn.Module) -> bool:
    """The hooks ``make_graphed_callables`` refuses on the module it is given."""
    return bool(module._forward_hooks or module._forward_pre_hooks or module._backward_hooks)


@contextlib.contextmanager
def autocast_as(dtype: str | None) -> Iterator[None]:
    """The autocast state the module call ran under, without autocast's cache (which
    ``make_graphed_callables`` refuses): the graphs then hold the same casts."""
    if dtype is None:
        with torch.autocast("cuda", enabled=False) if cuda_autocast() else contextlib.nullcontext():
            yield
        return
    with torch.autocast("cuda", dtype=getattr(torch, dtype), cache_enabled=False):
        yield


def cuda_autocast() -> str | None:
    """The dtype CUDA autocast casts to right now, or None when it is off."""
    try:
        enabled = torch.is_autocast_enabled("cuda")
        dtype = torch.get_autocast_dtype("cuda")
    except (TypeError, AttributeError):  # older torch: the GPU-only spellings
        enabled, dtype = torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
    return str(dtype).removeprefix("torch.") if enabled else None


@dataclass
class GraphedForward:
    """The module with its graphs in place behind a switch (``use_graph``)."""

    module: torch.nn.Module
    saved: Any  # the instance's own ``forward`` entry before, or _ABSENT
    graphed: Callable[..., Any]
    setup_us: float
    use_graph: bool = False

    def eager(self, *args: Any, **kwargs: Any) -> Any:
        if self.saved is not _ABSENT:
            return self.saved(*args, **kwargs)
        return type(self.module).forward(self.module, *args, **kwargs)

    def dispatch(self, *args: Any, **kwargs: Any) -> Any:
        return self.graphed(*args, **kwargs) if self.use_graph else self.eager(*args, **kwargs)

    def install(self) -> None:
        """The switch in the module's place again: putting the user's state back (worker/
        plan_state.py) also puts back the module's own ``forward`` entry, which is the switch's."""
        self.module.__dict__["forward"] = self.dispatch

    def restore(self) -> None:
        put_back(self.module, self.saved)


def put_back(module: torch.nn.Module, saved: Any) -> None:
    if saved is _ABSENT:
        module.__dict__.pop("forward", None)
    else:
        module.__dict__["forward"] = saved


def graph_module(
    module: torch.nn.Module, sample_args: tuple, autocast: str | None, grad_enabled: bool, make: Make | None = None
) -> GraphedForward:
    """Graph ``module`` on ``sample_args`` under the call's autocast and grad mode and put a
    switch in its place (off: eager). On failure the module is as it was, and it raises."""
    make = make or torch.cuda.make_graphed_callables
    saved = module.__dict__.get("forward", _ABSENT)
    start = time.perf_counter()
    try:
        with autocast_as(autocast), torch.set_grad_enabled(grad_enabled):
            make(module, sample_args)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        graphed = module.__dict__.get("forward", _ABSENT)
        if graphed is _ABSENT or graphed is saved:
            raise RuntimeError("make_graphed_callables left the module's forward unchanged")
    except BaseException:
        put_back(module, saved)
        raise
    switch = GraphedForward(module, saved, graphed, (time.perf_counter() - start) * 1e6)
    module.__dict__["forward"] = switch.dispatch
    return switch
