"""Undoing and checking launchprof's extra calls: snapshots of the state a step mutates
(restored after capture warm-up, validation and timing bursts), and the validation that
runs one call eagerly and as a replay from the same state and compares them leaf by leaf.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from launchprof.events.capture_events import ValidationEvent, ValidationLeaf
from launchprof.worker.call_timer import Timed, timed
from launchprof.worker.trees import clone_tensors, leaves


def version_of(t: torch.Tensor) -> int | None:
    """The in-place version counter; None for inference tensors, which have none (treated
    as possibly mutated, so they are snapshotted and restored)."""
    return None if t.is_inference() else t._version


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


def compare_trees(expected: Any, actual: Any, label: str) -> list[dict[str, Any]]:
    """Leaf-by-leaf comparison; float tensors within a tight tolerance, others exactly."""
    exp, act = list(leaves(expected, label)), list(leaves(actual, label))
    if len(exp) != len(act):
        return [{"path": label, "match": False, "max_abs_diff": None, "why": "different structure"}]
    out = []
    for (path, e), (_, a) in zip(exp, act, strict=True):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            if e.shape != a.shape or e.dtype != a.dtype:
                out.append({"path": path, "match": False, "max_abs_diff": None, "why": "shape or dtype differs"})
                continue
            if e.is_floating_point() or e.is_complex():
                diff = (e.double() - a.double()).abs()
                max_abs = float(diff.max()) if diff.numel() else 0.0
                ok = bool(torch.allclose(e, a, rtol=1e-4, atol=1e-6, equal_nan=True))
            else:
                max_abs = float((e.long() - a.long()).abs().max()) if e.numel() else 0.0
                ok = bool(torch.equal(e, a))
            out.append({"path": path, "match": ok, "max_abs_diff": max_abs})
        else:
            out.append({"path": path, "match": bool(e == a) if not isinstance(e, torch.Tensor) else False, "max_abs_diff": None})
    return out


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
    state: dict[str, torch.Tensor],
    mutated_args: set[str],
    mutated_state: set[str],
) -> Validation:
    """Eager and replay of the same call from the same state, compared leaf by leaf. The
    caller is left with eager semantics: what eager produced is put back afterwards."""
    snap = Snapshot.take(mutated_tensors(live_args.items(), mutated_args, state, mutated_state))
    torch.cuda.synchronize()
    eager_out = clone_tensors(user(*args, **kwargs))
    torch.cuda.synchronize()
    eager_args = {p: t.detach().clone() for p, t in live_args.items() if p in mutated_args}
    eager_state = {n: t.detach().clone() for n, t in state.items() if n in mutated_state}
    snap.restore()
    _, t = timed(run_graph)
    diffs = compare_trees(eager_out, static_out, "output")
    for p, expected in eager_args.items():
        if p in static_args:
            diffs += compare_trees(expected, static_args[p], f"argument {p} (mutated in place)")
    for n, expected in eager_state.items():
        diffs += compare_trees(expected, state[n], f"state {n} (mutated in place)")
    with torch.inference_mode():
        for n, value in eager_state.items():
            state[n].copy_(value)
        for p, value in eager_args.items():
            live_args[p].copy_(value)
    return Validation(eager_out=eager_out, fields=summarise(diffs), timing=t)
