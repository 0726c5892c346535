"""The aten ops one call of the step runs, in order: what the profile phase records of its
calls when no profiler runs on them.

A dispatch mode sees every aten op below autograd (the backward's too), so two calls that
take different branches of the step's Python, or of a library's, leave different sequences.
Only the op objects are kept during the call; their names are joined and hashed after it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from launchprof.events.observation_events import OpSequenceEvent
from launchprof.worker.dispatch_modes import without_dynamo_import


class _OpRecorder(TorchDispatchMode):
    """Appends each op and runs it unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[Any] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class OpSequence:
    count: int
    digest: str

    def event(self, index: int) -> OpSequenceEvent:
        return OpSequenceEvent(index=index, count=self.count, digest=self.digest)


def digest_of(names: list[str]) -> str:
    """sha1 hex of the names joined by newlines (docs/worker-events.md)."""
    return hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()


def recorded_call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Any, OpSequence]:
    """``fn(*args, **kwargs)`` run once under the recorder: its result and its op sequence.
    An exception of ``fn`` passes through as it was raised."""
    recorder = _OpRecorder()
    with without_dynamo_import(_OpRecorder), recorder:
        out = fn(*args, **kwargs)
    names = [str(op) for op in recorder.ops]
    return out, OpSequence(count=len(names), digest=digest_of(names))
