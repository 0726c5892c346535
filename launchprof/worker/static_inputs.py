"""The graph's static inputs: which tensors the graph reads in place, which get a static
copy that new data is copied into before each replay, and the copy-back of arguments the
target mutates in place (so a replayed call leaves the caller's tensors as eager would).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

import torch

from launchprof.worker.trees import flat_tensors, map_tree, tensor_leaves


def parameter_order(signature: inspect.Signature | None, args: tuple, kwargs: dict) -> Any:
    """The call's arguments in the target's parameter order, whatever keyword order the
    caller used: static buffers are matched to new data by this order."""
    if not kwargs:
        return args
    if signature is not None:
        try:
            return tuple(signature.bind(*args, **kwargs).arguments.values())
        except TypeError:
            pass
    return (args, tuple(sorted(kwargs.items())))


def signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


class StaticInputs:
    """Tracks argument identity across calls, then owns the copy plan after capture."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.signature = signature_of(fn)
        self.arg_ptrs: dict[str, int] = {}
        self.arg_refs: dict[str, weakref.ref] = {}
        self.moved_args: set[str] = set()
        self.copy_plan: list[int] = []  # flat indices of inputs copied into static buffers
        self.kept: list[int] = []  # flat indices of inputs the graph reads in place
        self.static_flat: list[torch.Tensor] = []
        self.static_named: dict[str, torch.Tensor] = {}

    def canon(self, args: tuple, kwargs: dict) -> Any:
        return parameter_order(self.signature, args, kwargs)

    def observe(self, args: tuple, kwargs: dict) -> None:
        """An input is stable only if it is the very same tensor every call. A fresh tensor
        that happens to land at the same address (the caching allocator reuses blocks) is
        not: once capture holds the old one, the new ones land elsewhere."""
        for p, t in tensor_leaves(self.canon(args, kwargs)):
            ptr = t.data_ptr()
            first = self.arg_refs.setdefault(p, weakref.ref(t))
            if self.arg_ptrs.setdefault(p, ptr) != ptr or first() is not t:
                self.moved_args.add(p)

    def make(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Static buffers: a tensor passed at the same address every call is its own static
        buffer (the graph reads it in place, as a hand-graphed loop would); one that is a new
        allocation each call gets a copy that new data is copied into before each replay."""
        keep = {id(t) for p, t in tensor_leaves(self.canon(args, kwargs)) if p not in self.moved_args}

        def pick(v: Any) -> Any:
            if isinstance(v, torch.Tensor):
                return v if id(v) in keep else v.detach().clone()
            return v

        both = map_tree((args, kwargs), pick)
        return both[0], both[1]

    def plan(self, static_args: tuple, static_kwargs: dict, args: tuple, kwargs: dict) -> None:
        """After capture: which flat inputs are copied before a replay, which are read in place."""
        self.static_flat = flat_tensors(self.canon(static_args, static_kwargs))
        self.static_named = dict(tensor_leaves(self.canon(static_args, static_kwargs)))
        live = flat_tensors(self.canon(args, kwargs))
        self.copy_plan = [i for i, (st, lv) in enumerate(zip(self.static_flat, live, strict=True)) if st is not lv]
        copied = set(self.copy_plan)
        self.kept = [i for i in range(len(live)) if i not in copied]

    def static_bytes(self) -> int:
        """GPU bytes of launchprof's own static copies (inputs read in place cost nothing)."""
        return sum(self.static_flat[i].numel() * self.static_flat[i].element_size() for i in self.copy_plan if self.static_flat[i].is_cuda)

    def moved_since_capture(self, args: tuple, kwargs: dict) -> bool:
        """An input that stayed put until capture moved: the graph would read the old tensor."""
        if not self.kept:
            return False
        live = flat_tensors(self.canon(args, kwargs))
        return any(live[i] is not self.static_flat[i] for i in self.kept)

    def copy_pairs(self, args: tuple, kwargs: dict) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(static buffer, new data) for every input copied before a replay."""
        new = flat_tensors(self.canon(args, kwargs))
        return [(self.static_flat[i], new[i]) for i in self.copy_plan]

    def copy_in(self, args: tuple, kwargs: dict) -> None:
        for static, new in self.copy_pairs(args, kwargs):
            static.copy_(new, non_blocking=True)

    def copy_back(self, args: tuple, kwargs: dict, mutated_args: set[str]) -> None:
        """Arguments the target mutates in place: replay mutated the static copies, so copy
        the result back into the caller's tensors (eager semantics)."""
        if not mutated_args:
            return
        with torch.inference_mode():
            for p, t in tensor_leaves(self.canon(args, kwargs)):
                static = self.static_named.get(p)
                if p in mutated_args and static is not None and static is not t:
                    t.copy_(static)
