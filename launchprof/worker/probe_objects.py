"""Which objects the probe call created: a write to one of them is not a host side effect.

A write to an attribute of an object the call itself made (a cache built per call, a mask,
a list of collected outputs) is gone or handed back with the result when the call returns;
replay does not need to repeat it. Only a write to an object that was there before the call
(the model, a module-level counter, the caller's list) changes state that outlives the call.

``gc.freeze()`` moves every object the collector tracks into its permanent generation, in
constant time, whatever the size of the process. What ``gc.get_objects()`` lists after the
call is then what was created since and is still alive; ``gc.unfreeze()`` puts the rest
back, also in constant time. Nothing is copied and nothing is kept alive, so a large model
costs no more than a small one, and memory the step frees stays free.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any


class _Canary:
    """An object made before the freeze: if it shows up as new, the freeze did not hold."""


class CallObjects:
    """The objects created during one call, by identity.

    Unknown (``new_ids`` None) when the freeze did not hold: every object then counts as one
    that existed before, as it did before launchprof knew which were new. A process that had
    frozen objects of its own (torch 2.11 with CUDA on Python 3.12 had 375 before the probe on
    an H200) gets them thawed by the unfreeze: they become collectable again, which changes no
    object; refusing instead filed every write to a per-call cache as a side effect."""

    def __init__(self) -> None:
        self.new_ids: set[int] | None = None
        self._canary: _Canary | None = None

    def begin(self) -> None:
        self._canary = _Canary()
        gc.freeze()

    def end(self) -> None:
        """List what the call created, then thaw the process as it was."""
        if self._canary is None:
            return
        try:
            created = {id(o) for o in gc.get_objects()}
            self.new_ids = None if id(self._canary) in created else created
        finally:
            gc.unfreeze()
            self._canary = None

    def existed(self, obj: Any) -> bool | None:
        """True when ``obj`` was there before the call; False when the call created it; None
        for a dict the call may only have started tracking (a dict of plain values is not
        tracked until it holds a container), which only its owner can tell."""
        if self.new_ids is None or id(obj) not in self.new_ids:
            return True
        return None if type(obj) is dict else False


    def namespace_existed(self, glb: dict[str, Any]) -> bool:
        """Whether a module's globals existed before the call: a module's namespace always
        holds ``__builtins__``, so the collector tracked it from its first line on, and its
        id alone decides (a module imported during the call is new)."""
        return self.new_ids is None or id(glb) not in self.new_ids


def holder(obj: Any) -> Any:
    """A reference that does not keep ``obj`` alive where it can: a weak one. An object
    that dies during the call is one nobody can reach after it."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def held(ref: Any) -> Any:
    return ref()
