"""Running the bursts from the plan: building the calls, protecting the user's state.

The burst calls are extra calls of the user's step, so everything they change is saved
before and put back after: everything the step can reach (worker/plan_state.py), tensors,
Python state and generators. The user's prints are silenced meanwhile,
so a script's output does not repeat. Any failure becomes a note: the in-loop timings
remain, and the run is never lost.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from launchprof.worker.burst import Kind, run_bursts
from launchprof.worker.host_speed import cuda_host_speed, write_unmeasured
from launchprof.worker.trees import clone_tensors, tensor_leaves
from launchprof.worker.validator import mutated_tensors
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import HostSpeedMissing, NoteCode, RestoredAfter
from launchprof.worker.plan_state import put_back, save

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun


def _eager_call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Callable[[], Any]:
    return lambda: fn(*args, **kwargs)


def _replay_call(pairs: list[tuple[torch.Tensor, torch.Tensor]], graph: torch.cuda.CUDAGraph) -> Callable[[], None]:
    """The docs pattern, nothing else: copy the new inputs into the static buffers, replay."""

    def run() -> None:
        for static, new in pairs:
            static.copy_(new, non_blocking=True)
        graph.replay()

    return run


def build_kinds(run: TargetRun, sets: list[tuple[tuple, dict]]) -> list[Kind]:
    """(eager, replay, clone) calls over the recorded sets; eager only without a graph."""
    kinds = [Kind("eager", [_eager_call(run.fn, a, k) for a, k in sets])]
    cap = run.captured
    if cap is not None:
        kinds.append(Kind("replay", [_replay_call(run.inputs.copy_pairs(a, k), cap.graph) for a, k in sets]))
        static_out = cap.static_out
        kinds.append(Kind("clone", [lambda: clone_tensors(static_out)], changes_state=False))
    return kinds


def protected_tensors(run: TargetRun, sets: list[tuple[tuple, dict]]) -> list[torch.Tensor]:
    """Every tensor the bursts may change that the user can see afterwards."""
    out: list[torch.Tensor] = []
    for args, kwargs in sets:
        out += mutated_tensors(tensor_leaves(run.inputs.canon(args, kwargs)), run.mutated_args, run.state_of(args, kwargs), run.mutated_state)
    return out


class UserState:
    """What launchprof's extra calls (bursts, the stream check, the bucket and compile
    measurements) may change that the user can see afterwards: everything the calls on
    ``sets`` can reach (worker/plan_state.py). Saved before the calls, put back after them,
    so the script goes on as `python script.py` would; ``after`` names the calls in the
    note written where something could not be put back."""

    def __init__(self, run: TargetRun, sets: list[tuple[tuple, dict]], after: RestoredAfter = RestoredAfter.BURSTS) -> None:
        torch.cuda.synchronize()
        self.run, self.after = run, after
        self.saved = save(run, sets)

    def restore(self) -> None:
        try:
            torch.cuda.synchronize()
        finally:
            put_back(self.run, self.saved, self.after)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """The user's prints during the extra calls go nowhere: the script would not print them."""
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        yield


def run_plan_bursts(run: TargetRun) -> None:
    sets = list(run.replay_sets if run.captured is not None else run.eager_sets)
    if not sets:
        return
    try:
        kinds = build_kinds(run, sets)
        state = UserState(run, sets)
    except Exception as exc:
        run.events.write(NoteEvent(code=NoteCode.BURSTS_NOT_STARTED, params={"error": f"{type(exc).__name__}: {exc}"}))
        return
    try:
        speed, unmeasured = cuda_host_speed(), ""  # the host's speed while the step is timed, for the prediction
    except Exception as exc:
        speed, unmeasured = None, f"{type(exc).__name__}: {str(exc)[:200]}"
    try:
        with silenced():
            run_bursts(kinds, run.config.repeat, run.events, between=speed.sample if speed is not None else None, reset=state.restore)
        if speed is not None:
            speed.write(run.events, "between the bursts")
        else:
            write_unmeasured(run.events, HostSpeedMissing.SAMPLER_FAILED, unmeasured)
    except Exception as exc:
        run.events.write(NoteEvent(code=NoteCode.BURSTS_STOPPED, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
    finally:
        try:
            state.restore()
        except Exception as exc:  # inside the user's call of the target: never raise into their script
            run.events.write(NoteEvent(code=NoteCode.STATE_NOT_RESTORED, params={"after": RestoredAfter.BURSTS.value, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
