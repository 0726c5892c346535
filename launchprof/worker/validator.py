"""Checking a replay against eager: the validation runs one call eagerly and as a replay
from the same state (saved and put back by worker/saved_state.py) and compares them leaf
by leaf; and ``Snapshot``, the plain clones of given tensors that the bucket checks use
between two calls of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from launchprof.events.capture_events import ValidationEvent, ValidationLeaf
from launchprof.worker.call_timer import Timed, timed
from launchprof.worker.saved_state import SavedState
from launchprof.worker.trees import clone_tensors, leaves


def cuda_rng_state() -> torch.Tensor | None:
    """The current device's default CUDA generator state (seed and Philox offset, on the
    host: reading it launches nothing); None without CUDA."""
    return torch.cuda.get_rng_state() if torch.cuda.is_available() else None


def rng_advanced(before: torch.Tensor | None) -> bool:
    """Whether the default CUDA generator moved since ``before`` (a :func:`cuda_rng_state`):
    the step drew random numbers on the GPU."""
    if before is None:
        return False
    after = cuda_rng_state()
    return after is not None and not torch.equal(before, after)


@dataclass
class Snapshot:
    """Clones of the tensors a step mutates plus both RNG states, to put back later."""

    tensors: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    cuda_rng: torch.Tensor | None = None
    cpu_rng: torch.Tensor | None = None

    @classmethod
    def take(cls, tensors: Iterable[torch.Tensor], cpu_rng: bool = False) -> Snapshot:
        """``cpu_rng``: also the CPU generator (timing bursts; a validated call consumes it
        once, as the script's own call would)."""
        seen: set[int] = set()
        snap = cls()
        for t in tensors:
            if id(t) not in seen:
                seen.add(id(t))
                snap.tensors.append((t, t.detach().clone()))
        snap.cuda_rng = cuda_rng_state()
        snap.cpu_rng = torch.get_rng_state() if cpu_rng else None
        return snap

    def restore(self) -> None:
        with torch.inference_mode():
            for live, saved in self.tensors:
                live.copy_(saved)
        if self.cuda_rng is not None:
            torch.cuda.set_rng_state(self.cuda_rng)
        if self.cpu_rng is not None:
            torch.set_rng_state(self.cpu_rng)

    def nbytes(self) -> int:
        return sum(s.numel() * s.element_size() for _, s in self.tensors)


def mutated_tensors(named_args: Iterable[tuple[str, torch.Tensor]], mutated_args: set[str], state: dict[str, torch.Tensor], mutated_state: set[str]) -> list[torch.Tensor]:
    """The argument and state tensors the warm-up calls saw mutated."""
    out = [t for p, t in named_args if p in mutated_args]
    out += [t for n, t in state.items() if n in mutated_state]
    return out


# Elementwise tolerance of a float leaf: rtol and atol, plus one unit in the last place of its
# stored type (torch.finfo(dtype).eps relative): eager and replay round the same value
# into bfloat16 (spacing 2**-8 relative) or float16, and one rounding step apart is the
# least two results of that type can differ by.
RTOL, ATOL = 1e-4, 1e-6
# A mutated state tensor may differ by more, elementwise, where its difference is small
# next to what the step changed in it: ||eager - replay|| <= STEP_RTOL * ||eager - before||.
# Adam divides each gradient by its running RMS, so a rounding-level difference in a
# near-zero gradient element (a captured kernel reducing in another order) becomes a visible
# difference in that weight. On the H200 a hand-captured AdamW step replays bit for bit
# (max |diff| 0.0, the issue-33 field study), and the replay-mismatch seen there was state
# left unsaved (worker/fingerprint.py); this is the margin for other kernels. Measured on CPU
# (an MLP 256-512-512-10, AdamW lr 1e-3, one step from the same state): reordering the
# batch's reduction gives a ratio of 8e-8 to 9e-6 (after 2 to 200 steps); leaving the
# optimizer's moments and step count un-restored, the failure this must still catch, gives
# 2.8e-3 to 0.3. 1e-3 lies between them, a hundred times above the rounding case.
STEP_RTOL = 1e-3


def _float_diff(e: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(|e - a| with NaN where both are NaN set to 0, the elementwise allowance)."""
    e64, a64 = e.detach().double(), a.detach().double()
    diff = (e64 - a64).abs()
    same = (e64 == a64) | (torch.isnan(e64) & torch.isnan(a64))  # equal infinities, NaN in both
    diff = torch.where(same, torch.zeros_like(diff), diff)
    if e.is_complex():
        return diff, RTOL * e64.abs() + ATOL
    return diff, (RTOL + torch.finfo(e.dtype).eps) * e64.abs() + ATOL


def _leaf(path: str, e: Any, a: Any, before: torch.Tensor | None) -> dict[str, Any]:
    if not (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)):
        return {"path": path, "match": bool(e == a) if not isinstance(e, torch.Tensor) else False, "max_abs_diff": None}
    if e.shape != a.shape or e.dtype != a.dtype:
        return {"path": path, "match": False, "max_abs_diff": None, "why": "shape or dtype differs"}
    if not (e.is_floating_point() or e.is_complex()):
        max_abs = float((e.detach().long() - a.detach().long()).abs().max()) if e.numel() else 0.0
        return {"path": path, "match": bool(torch.equal(e, a)), "max_abs_diff": max_abs}
    if not e.numel():
        return {"path": path, "match": True, "max_abs_diff": 0.0}
    diff, allowance = _float_diff(e, a)
    ok = bool((diff <= allowance).all())
    if not ok and before is not None and before.shape == e.shape:
        step = float((e.detach().double() - before.detach().double()).norm())
        ok = bool(float(diff.norm()) <= STEP_RTOL * step)
    return {"path": path, "match": ok, "max_abs_diff": float(diff.max())}


def compare_trees(expected: Any, actual: Any, label: str, before: Any = None) -> list[dict[str, Any]]:
    """Leaf-by-leaf comparison: float tensors within ``RTOL``/``ATOL`` plus one rounding
    step of their type, others exactly. ``before``: the state's value before the step (same
    structure), which allows a mutated state tensor the ``STEP_RTOL`` difference."""
    exp, act = list(leaves(expected, label)), list(leaves(actual, label))
    if len(exp) != len(act):
        return [{"path": label, "match": False, "max_abs_diff": None, "why": "different structure"}]
    olds = [v for _, v in leaves(before, label)] if before is not None else [None] * len(exp)
    if len(olds) != len(exp):
        olds = [None] * len(exp)
    return [_leaf(path, e, a, old if isinstance(old, torch.Tensor) else None) for (path, e), (_, a), old in zip(exp, act, olds, strict=True)]


def summarise(diffs: list[dict[str, Any]]) -> dict[str, Any]:
    """The validation event's verdict fields from the per-leaf comparisons."""
    worst = max((d for d in diffs if not d["match"]), key=lambda d: d["max_abs_diff"] or 0.0, default=None)
    return {
        "match": all(d["match"] for d in diffs),
        "max_abs_diff": max((d["max_abs_diff"] or 0.0 for d in diffs), default=0.0),
        "worst": worst,
        "leaves": len(diffs),
    }


@dataclass
class Validation:
    eager_out: Any
    fields: dict[str, Any]  # summarise's verdict fields
    timing: Timed

    def event(self, index: int, changed_scalars: list[str], scalars: dict[str, Any], captured: dict[str, Any]) -> ValidationEvent:
        """The ``validation`` event: the verdict, the Python numbers that changed, the timing."""
        worst = self.fields["worst"]
        return ValidationEvent(
            index=index,
            match=self.fields["match"],
            max_abs_diff=self.fields["max_abs_diff"],
            worst=ValidationLeaf(**worst) if worst is not None else None,
            leaves=self.fields["leaves"],
            changed_scalars=changed_scalars,
            scalars=scalars,
            captured_scalars=captured,
            wall_us=self.timing.wall_us,
            gpu_us=self.timing.gpu_us,
        )


def validate(
    user: Callable[..., Any],
    run_graph: Callable[[], None],
    static_out: Any,
    args: tuple,
    kwargs: dict,
    live_args: dict[str, torch.Tensor],
    static_args: dict[str, torch.Tensor],
    mutated_args: set[str],
    save: Callable[[], SavedState],
    put_back: Callable[[SavedState], Any],
) -> Validation:
    """Eager and replay of the same call from the same state, compared leaf by leaf. The
    caller is left with eager semantics: what eager produced is put back afterwards.

    ``save`` saves everything the call can reach (worker/saved_state.py) and ``put_back``
    restores it, reporting what it could not: the state is saved before the eager call and
    after it, put back to the first before the replay (so the replay starts where eager
    did: parameters, optimizer moments and step counts, gradients, a cache's tensors and
    counters, the generators) and to the second at the end."""
    before = save()
    torch.cuda.synchronize()
    eager_out = clone_tensors(user(*args, **kwargs))
    torch.cuda.synchronize()
    eager_args = {p: t.detach().clone() for p, t in live_args.items() if p in mutated_args}
    after = save()
    put_back(before)
    _, t = timed(run_graph)
    diffs = compare_trees(eager_out, static_out, "output")
    for p, expected in eager_args.items():
        if p in static_args:
            diffs += compare_trees(expected, static_args[p], f"argument {p} (mutated in place)")
    diffs += _state_diffs(before, after, {id(v) for v in live_args.values()})
    put_back(after)
    with torch.inference_mode():
        for p, value in eager_args.items():
            live_args[p].copy_(value)
    return Validation(eager_out=eager_out, fields=summarise(diffs), timing=t)


def _state_diffs(before: SavedState, after: SavedState, arguments: set[int]) -> list[dict[str, Any]]:
    """Each tensor the step mutates in place (the same tensor before and after the eager
    call) against what the replay left in it; argument tensors are compared through the
    graph's static buffers instead."""
    old = before.cloned()
    diffs = []
    for path, (live, expected) in after.cloned().items():
        if path in old and old[path][0] is live and id(live) not in arguments:
            diffs += compare_trees(expected, live, f"state {path} (mutated in place)", before=old[path][1])
    return diffs
