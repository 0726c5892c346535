"""The user's state around launchprof's extra calls (the capture's warm-up calls, the capture
itself and its second capture, each validation's second half, the profiled replay, the
timing bursts, the bucket and compile measurements, the stream check): saved before them,
put back after, so the script goes on exactly as ``python script.py`` would.

What is saved, from one walk of everything the step can reach (worker/reach.py):

- every tensor the step was seen to mutate (``mutated``: paths whose version or checksum
  moved during the warm-up calls), and every inference tensor without a checksum, is
  cloned and copied back; this is the one costly part, so it is bounded (``clone_bytes``);
- every other tensor's ``_version`` and a checksum of its bits (worker/fingerprint.py: some
  CUDA kernels write without bumping the version): one the extra calls changed anyway
  cannot be put back, and is reported (``Lost``) rather than silently left changed;
- every holder's contents by identity (worker/hoststate.py): attributes, list and dict
  contents, ``.grad``, flags and counters;
- the generators' states: torch's CPU and current CUDA generators, Python's ``random``,
  numpy's global one, and any generator object the walk reached;
- small numpy arrays by copy;
- generators (``yield``) and iterators by their position: one the extra calls advanced is
  ``Lost`` (it cannot be rewound).

``restore`` returns what could not be put back. The plan says so in a note and stops the
script (worker/plan_state.py, ``stop_if_lost``): going on would run it on changed state.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from launchprof.worker.fingerprint import Sum, checkable, checksums
from launchprof.worker.hoststate import HostState
from launchprof.worker.reach import GENERATORS, Budget, Reached, Uncovered, is_atom, reach, type_name

MAX_ARRAY_BYTES = 64 << 20  # a numpy array larger than this is not copied (not covered)


@dataclass(frozen=True)
class Lost:
    """State the extra calls changed that could not be put back: where, and why
    (``not-cloned``: a tensor not seen mutated before, or over the clone budget;
    ``generator``: a generator or iterator advanced; ``restore-failed``: putting it back raised)."""

    path: str
    why: str
    detail: str = ""


def version_of(t: torch.Tensor) -> int | None:
    """The in-place version counter; None for inference tensors, which have none."""
    return None if t.is_inference() else t._version


@dataclass(frozen=True)
class Mark:
    """What says a tensor changed: its version and the checksum of its bits (worker/fingerprint.py)."""

    version: int | None
    sum: Sum | None

    def moved(self, t: torch.Tensor, now: Sum | None) -> bool:
        if self.sum is not None and now != self.sum:
            return True
        if self.version is None:  # an inference tensor has no counter: the checksum decides, if there is one
            return self.sum is None
        return version_of(t) != self.version


def marks(tensors: list[torch.Tensor]) -> list[Mark]:
    return [Mark(version_of(t), s) for t, s in zip(tensors, checksums(tensors), strict=True)]


def marked(tensors: list[tuple[str, torch.Tensor]]) -> list[tuple[str, torch.Tensor, Mark]]:
    """(path, tensor) pairs with their marks, for :func:`changed_tensors` later."""
    return [(path, t, mark) for (path, t), mark in zip(tensors, marks([t for _, t in tensors]), strict=True)]


def version_marked(tensors: Iterable[tuple[str, torch.Tensor]]) -> list[tuple[str, torch.Tensor, Mark]]:
    """Like :func:`marked`, with a checksum only where the version counter is missing: an
    inference tensor (made under ``torch.inference_mode()``) has none, and a missing counter
    is no evidence of a write. The counter costs nothing; a checksum reads every byte."""
    pairs = list(tensors)
    sums = iter(checksums([t for _, t in pairs if version_of(t) is None]))
    return [(path, t, Mark(v, next(sums) if v is None else None)) for path, t in pairs for v in (version_of(t),)]


def changed_tensors(marked: list[tuple[str, torch.Tensor, Mark]]) -> list[str]:
    """The paths of the marked tensors that changed since they were marked (a checksum is
    taken again only of those that had one)."""
    now = iter(checksums([t for _, t, mark in marked if mark.sum is not None]))
    return [path for path, t, mark in marked if mark.moved(t, next(now) if mark.sum is not None else None)]


def _token(value: Any, depth: int) -> Any:
    """Something equal as long as ``value`` is where it was: a number as itself, a generator
    or iterator by its position, anything else by identity."""
    if is_atom(value):
        return value
    if depth < 3 and isinstance(value, GENERATORS):
        return position(value, depth + 1)
    if depth < 3 and hasattr(type(value), "__next__"):
        try:
            reduced = value.__reduce__()  # a builtin iterator's (constructor, args, index)
        except Exception:
            return id(value)
        return tuple(_token(v, depth + 1) for v in reduced[1:]) if isinstance(reduced, tuple) else id(value)
    if isinstance(value, tuple):
        return tuple(_token(v, depth + 1) for v in value) if depth < 3 else id(value)
    return id(value)


def position(obj: Any, depth: int = 0) -> tuple[Any, ...]:
    """Where a generator or iterator is: its frame's instruction and locals, what it
    delegates to (``yield from``); an iterator's ``__reduce__`` state. A changed position
    means it was advanced."""
    if not isinstance(obj, GENERATORS):
        return (_token(obj, depth),)
    frame = getattr(obj, "gi_frame", None) or getattr(obj, "cr_frame", None) or getattr(obj, "ag_frame", None)
    if frame is None:
        return ("finished",)
    inner = getattr(obj, "gi_yieldfrom", None) or getattr(obj, "cr_await", None)
    local = tuple((k, _token(v, depth)) for k, v in frame.f_locals.items())
    return (frame.f_lasti, local, _token(inner, depth) if inner is not None else None)


def _rng_state(obj: Any) -> Any:
    if isinstance(obj, torch.Generator):
        return obj.get_state()
    if isinstance(obj, random.Random):
        return obj.getstate()
    if hasattr(obj, "bit_generator"):
        return obj.bit_generator.state
    return obj.get_state()


def _set_rng_state(obj: Any, state: Any) -> None:
    if isinstance(obj, torch.Generator):
        obj.set_state(state)
    elif isinstance(obj, random.Random):
        obj.setstate(state)
    elif hasattr(obj, "bit_generator"):
        obj.bit_generator.state = state
    else:
        obj.set_state(state)


def global_rngs() -> list[tuple[str, Any]]:
    """The generators every step draws from without naming them."""
    out: list[tuple[str, Any]] = [("random", random._inst)]  # type: ignore[attr-defined]
    np = sys.modules.get("numpy")
    if np is not None:
        out.append(("numpy.random", np.random.mtrand._rand))
    return out


@dataclass
class SavedState:
    clones: list[tuple[str, torch.Tensor, torch.Tensor]] = field(default_factory=list)  # (path, live, clone)
    marked: list[tuple[str, torch.Tensor, Mark]] = field(default_factory=list)  # not cloned
    host: HostState = field(default_factory=HostState)
    rngs: list[tuple[str, Any, Any]] = field(default_factory=list)
    arrays: list[tuple[str, Any, Any]] = field(default_factory=list)
    generators: list[tuple[str, Any, tuple[Any, ...]]] = field(default_factory=list)
    cpu_rng: torch.Tensor | None = None
    cuda_rng: torch.Tensor | None = None
    uncovered: list[Uncovered] = field(default_factory=list)

    @classmethod
    def take(
        cls,
        roots: Iterable[tuple[str, Any]],
        mutated: set[str] | None = None,
        budget: Budget | None = None,
        clone_bytes: int | None = None,
        extra: Iterable[tuple[str, Any, str]] = (),
        also: Iterable[torch.Tensor] = (),
    ) -> SavedState:
        """Save everything reachable from ``roots``; ``mutated``: paths to clone (None:
        every tensor); ``extra``: more holders (the probe's finds); ``also``: more tensors
        known to be mutated, cloned wherever the walk finds them (or, if it does not, as
        they are)."""
        known = {id(t): t for t in also}
        reached = reach([*roots, *(("<mutated>", t) for t in known.values())], budget)
        snap = cls(uncovered=list(reached.uncovered))
        snap.host = HostState.of([*reached.holders, *extra])
        left = clone_bytes if clone_bytes is not None else default_clone_bytes()
        seen: set[int] = set()
        unmarked: list[tuple[str, torch.Tensor]] = []
        for path, t in reached.tensors:
            if id(t) in seen:
                continue
            seen.add(id(t))
            size = t.numel() * t.element_size() if t.is_cuda else 0  # the budget is device memory
            wanted = mutated is None or path in mutated or id(t) in known or (version_of(t) is None and not checkable(t))
            if wanted and size <= left:
                left -= size
                snap.clones.append((path, t, t.detach().clone()))
            else:
                unmarked.append((path, t))
                if wanted:
                    snap.uncovered.append(Uncovered(path, type_name(t), "budget"))
        snap.marked = marked(unmarked)
        snap._save_rngs(reached)
        for path, arr in reached.arrays:
            if arr.nbytes <= MAX_ARRAY_BYTES:
                snap.arrays.append((path, arr, arr.copy()))
            else:
                snap.uncovered.append(Uncovered(path, type_name(arr), "budget"))
        snap.generators = [(path, g, position(g)) for path, g in reached.watched]
        return snap

    def _save_rngs(self, reached: Reached) -> None:
        seen: set[int] = set()
        for path, obj in [*global_rngs(), *reached.rngs]:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            try:
                self.rngs.append((path, obj, _rng_state(obj)))
            except Exception:  # a CUDA generator of a device that cannot be read: not covered
                self.uncovered.append(Uncovered(path, type_name(obj), "opaque"))
        self.cpu_rng = torch.get_rng_state()
        self.cuda_rng = torch.cuda.get_rng_state() if torch.cuda.is_available() and torch.cuda.is_initialized() else None

    def restore(self) -> list[Lost]:
        """Put everything back; what could not be is returned."""
        # Marks first: a view shares its base's counter, and copying into the base bumps it.
        lost = [Lost(path, "not-cloned") for path in changed_tensors(self.marked)]
        with torch.inference_mode():
            for path, live, saved in self.clones:
                try:
                    live.copy_(saved)
                except Exception as exc:
                    lost.append(Lost(path, "restore-failed", f"{type(exc).__name__}: {exc}"[:200]))
        lost += [Lost(path, "restore-failed", error) for path, error in self.host.restore()]
        lost += self._restore_rngs()
        for path, arr, saved in self.arrays:
            try:
                if not (arr.shape == saved.shape and (arr == saved).all()):
                    arr[...] = saved
            except Exception as exc:
                lost.append(Lost(path, "restore-failed", f"{type(exc).__name__}: {exc}"[:200]))
        lost += [Lost(path, "generator") for path, g, where in self.generators if position(g) != where]
        return lost

    def _restore_rngs(self) -> list[Lost]:
        lost: list[Lost] = []
        for path, obj, state in self.rngs:
            try:
                _set_rng_state(obj, state)
            except Exception as exc:
                lost.append(Lost(path, "restore-failed", f"{type(exc).__name__}: {exc}"[:200]))
        torch.set_rng_state(self.cpu_rng)
        if self.cuda_rng is not None:
            torch.cuda.set_rng_state(self.cuda_rng)
        return lost

    def cloned(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """path -> (live tensor, its saved value)."""
        return {path: (live, saved) for path, live, saved in self.clones}

    def nbytes(self) -> int:
        return sum(s.numel() * s.element_size() for _, _, s in self.clones)


def default_clone_bytes() -> int:
    """How much the clones may take: most of the free device memory (a clone that does not
    fit would fail the extra calls with an out-of-memory error), without CUDA no limit."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        free, _ = torch.cuda.mem_get_info()
        return int(free * 0.8)
    return 1 << 62
