"""One fix's trial on the GPU: the patched step warmed up, captured, replayed on the recorded
argument sets, compared with the original's eager result, and timed.

The capture follows worker/capture.py's pattern (warm up on a side stream, capture with
``capture_error_mode="thread_local"``, the process left as it was after a failed capture);
each comparison is a validation (worker/validator.py): the original's eager call and the
patched replay from the same saved state, leaf by leaf. The speedup is the original's eager
median over the patched replay median (copy-in + replay), both timed here with the timer the
in-loop calls use, interleaved, on the same sets.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.fix_events import FixTrialEvent
from launchprof.model.findings import RestoredAfter
from launchprof.model.fix_scope import TrialReason
from launchprof.worker.call_timer import timed
from launchprof.worker.capture import recover_after_failed_capture
from launchprof.worker.fix_patch import Holder, installed
from launchprof.worker.plan_bursts import UserState, silenced
from launchprof.worker.plan_state import put_back, save
from launchprof.worker.static_inputs import StaticInputs
from launchprof.worker.trees import tensor_leaves
from launchprof.worker.validator import validate

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

WARMUP_CALLS = 2
TIMED_CALLS = 20  # replays timed, and as many eager calls of the original between them


@dataclass
class TrialResult:
    reason: TrialReason = TrialReason.NONE
    captured: bool | None = None
    calls_compared: int = 0
    matches: int = 0
    replay_us: list[float] | None = None
    eager_us: list[float] | None = None
    error: str | None = None
    function: str | None = None
    trial_us: float | None = None

    @property
    def verified(self) -> bool | None:
        if self.captured is None:
            return None
        return self.captured and self.calls_compared > 0 and self.matches == self.calls_compared

    def event(self, fix: Any, kind: str) -> FixTrialEvent:
        replay = statistics.median(self.replay_us) if self.replay_us else None
        eager = statistics.median(self.eager_us) if self.eager_us else None
        return FixTrialEvent(
            file=fix.file, line=fix.line, after=fix.after, code=fix.code, kind=kind, verified=self.verified,
            captured=self.captured, calls_compared=self.calls_compared, matches=self.matches,
            replay_step_us=replay, eager_step_us=eager, speedup=eager / replay if eager and replay else None,
            reason=self.reason.value, function=self.function, error=self.error, trial_us=self.trial_us,
        )  # fmt: skip


class WarmUpFailed(Exception):
    """The patched step raised when called eagerly: the fix does not run on this code."""


def _capture(call: Callable[..., Any], args: tuple, kwargs: dict, reset: Callable[[], None]) -> tuple[torch.cuda.CUDAGraph, Any]:
    """Warm up on a side stream, put the state back, capture. Raises WarmUpFailed, or what
    the capture raised with the process left as it was."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):
            for _ in range(WARMUP_CALLS):
                call(*args, **kwargs)
    except Exception as exc:
        torch.cuda.current_stream().wait_stream(side)
        raise WarmUpFailed(f"{type(exc).__name__}: {_first_line(exc)}") from None
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    reset()
    graph = torch.cuda.CUDAGraph()
    prior = torch.cuda.current_stream()
    try:
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            out = call(*args, **kwargs)
    except Exception:
        del graph
        recover_after_failed_capture(prior)
        raise
    return graph, out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else ""


def run_trial(run: TargetRun, holder: Holder, new: Any, call: Callable[..., Any], sets: list[tuple[tuple, dict]], budget_s: float) -> TrialResult:
    """The trial of one patched function; the user's state and functions put back after.
    The patched copy is in place only while the graph is warmed up and captured: the eager
    reference and the eager timings run the original."""
    result = TrialResult()
    try:
        state = UserState(run, sets, after=RestoredAfter.FIX_TRIAL)
    except Exception as exc:
        return TrialResult(reason=TrialReason.TRIAL_ERROR, error=f"{type(exc).__name__}: {_first_line(exc)}")
    try:
        with silenced():
            _measure(run, holder, new, call, sets, state, result, time.perf_counter() + max(budget_s, 0.5))
    except Exception as exc:  # launchprof's own failure, or the original step's, during the trial
        result.captured, result.reason = None, TrialReason.TRIAL_ERROR
        result.error = f"{type(exc).__name__}: {_first_line(exc)}"
    finally:
        state.restore()
        torch.cuda.empty_cache()
    if result.verified is False and result.reason is TrialReason.NONE:
        result.reason = TrialReason.REPLAY_DIFFERS
    return result


def _measure(
    run: TargetRun, holder: Holder, new: Any, call: Callable[..., Any], sets: list[tuple[tuple, dict]],
    state: UserState, result: TrialResult, deadline: float,
) -> None:  # fmt: skip
    inputs = StaticInputs(run.fn)
    inputs.moved_args = set(run.inputs.moved_args)
    args0, kwargs0 = sets[0]
    static_args, static_kwargs = inputs.make(args0, kwargs0)
    try:
        with installed(holder, new):
            graph, static_out = _capture(call, static_args, static_kwargs, state.restore)
    except WarmUpFailed as exc:
        result.captured, result.reason, result.error = False, TrialReason.TRIAL_ERROR, str(exc)
        return
    except Exception as exc:
        result.captured, result.reason = False, TrialReason.DID_NOT_CAPTURE
        result.error = f"{type(exc).__name__}: {_first_line(exc)}"
        return
    result.captured = True
    inputs.plan(static_args, static_kwargs, args0, kwargs0)
    state.restore()
    _compare(run, inputs, graph, static_out, sets, result)
    state.restore()
    _time(run.fn, inputs, graph, sets, result, deadline)
    del graph


def _replay_on(inputs: StaticInputs, graph: torch.cuda.CUDAGraph, args: tuple, kwargs: dict) -> Callable[[], None]:
    def replay() -> None:
        inputs.copy_in(args, kwargs)
        graph.replay()

    return replay


def _compare(run: TargetRun, inputs: StaticInputs, graph: torch.cuda.CUDAGraph, static_out: Any, sets: list[tuple[tuple, dict]], result: TrialResult) -> None:
    """Each recorded set: the original's eager call and the patched replay from one state."""
    for args, kwargs in sets:
        checked = validate(
            run.fn, _replay_on(inputs, graph, args, kwargs), static_out, args, kwargs, dict(tensor_leaves(inputs.canon(args, kwargs))),
            inputs.static_named, run.mutated_args, lambda a=args, k=kwargs: save(run, [(a, k)]),
            lambda saved: put_back(run, saved, RestoredAfter.FIX_TRIAL),
        )  # fmt: skip
        result.calls_compared += 1
        result.matches += int(bool(checked.fields["match"]))


def _time(original: Callable[..., Any], inputs: StaticInputs, graph: torch.cuda.CUDAGraph, sets: list[tuple[tuple, dict]], result: TrialResult, deadline: float) -> None:
    """The original's eager calls and the patched replays, interleaved, on the same sets."""
    result.replay_us, result.eager_us = [], []
    for i in range(TIMED_CALLS):
        args, kwargs = sets[i % len(sets)]
        result.eager_us.append(timed(lambda: original(*args, **kwargs))[1].wall_us)  # noqa: B023 - called at once
        result.replay_us.append(timed(_replay_on(inputs, graph, args, kwargs))[1].wall_us)
        if time.perf_counter() > deadline and i >= 4:
            break
