"""The largest part of a step that captures, when the whole step does not.

A training step whose capture fails (``GradScaler.step`` reads ``found_inf`` on the host, an
optimizer that is not capturable, a sync between backward and the update) can still graph
the forward and backward of the model it calls, through ``torch.cuda.make_graphed_callables``,
and keep the rest eager. This measures what that gains on the user's own step: the modules
the step calls directly are found in one recorded call, the one with the most parameters is
graphed first (a smaller one only if that fails), then the whole step is timed eagerly and
with the graphed module in place, in interleaved bursts (worker/burst.py) on the recorded
argument sets, and one call of each is compared. Everything the extra calls change is put
back (worker/plan_bursts.py ``UserState``), the module's ``forward`` included, and the
user's prints are silenced. Never raises: what went wrong is the event's ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.timing_events import TimingEvent
from launchprof.events.training_events import ModuleCandidate, PartialCaptureEvent, SampleArgRow
from launchprof.model.training_records import STATUS_MEASURED, STATUS_NOT_MEASURED, PartialSkip
from launchprof.worker.burst import Kind, run_bursts
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.graphed_module import GraphedForward, Make, graph_module, has_hooks
from launchprof.worker.module_calls import ModuleCall, record_module_calls
from launchprof.worker.plan_bursts import UserState, protected_tensors, silenced
from launchprof.worker.rank_sync import distributed
from launchprof.worker.trees import clone_tensors, leaves, tensor_leaves
from launchprof.worker.validator import compare_trees, summarise

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

MAX_TRIED = 3  # modules graphed before giving up (largest first)
MAX_SETS = 4  # recorded argument sets the bursts cycle through


class Collected(EventWriter):
    """Where run_bursts writes its timing events: kept here, not in the run's log (the
    plan's own eager and replay samples are those), and summed up in one event."""

    def __init__(self) -> None:  # no file
        self.wall: dict[str, list[float]] = {}
        self.gpu: dict[str, list[float]] = {}

    def write(self, record: Any) -> None:
        if isinstance(record, TimingEvent):
            self.wall.setdefault(record.kind, []).extend(record.wall_us)
            self.gpu.setdefault(record.kind, []).extend(g for g in record.gpu_us if g is not None)

    def close(self) -> None:
        return None


@dataclass
class Measured:
    call: ModuleCall
    setup_us: float
    timings: Collected
    fields: dict[str, Any]  # summarise's match and max_abs_diff


def measure_partial(run: TargetRun, index: int, args: tuple, kwargs: dict, make: Make | None = None) -> None:
    """Measure the step with its largest capturable module graphed; one event, never raises."""
    try:
        event = _measure(run, index, args, kwargs, make)
    except Exception as exc:
        event = _not_measured(index, PartialSkip.TIMING_FAILED, exc)
    run.events.write(event)


def _not_measured(index: int, reason: PartialSkip, exc: BaseException | None = None, rows: list[ModuleCandidate] | None = None) -> PartialCaptureEvent:
    error = f"{type(exc).__name__}: {str(exc)[:300]}" if exc is not None else None
    return PartialCaptureEvent(index=index, status=STATUS_NOT_MEASURED, reason=reason.value, error=error, candidates=rows or [])


def shapes_of(args: tuple, kwargs: dict) -> list[tuple[str, tuple[int, ...], torch.dtype]]:
    return [(p, tuple(t.shape), t.dtype) for p, t in tensor_leaves((args, kwargs))]


def burst_sets(run: TargetRun, args: tuple, kwargs: dict) -> list[tuple[tuple, dict]]:
    """This call's arguments, then recorded eager sets of the same shapes (the graph's)."""
    same = [s for s in run.eager_sets if shapes_of(*s) == shapes_of(args, kwargs)]
    return [(args, kwargs), *same[-(MAX_SETS - 1) :]]


def _measure(run: TargetRun, index: int, args: tuple, kwargs: dict, make: Make | None) -> PartialCaptureEvent:
    if distributed():
        return _not_measured(index, PartialSkip.DISTRIBUTED)
    sets = burst_sets(run, args, kwargs)
    state = UserState(run, sets)
    # The extra backward passes accumulate into ``.grad``, and a graphed backward hands autograd
    # its static gradient buffers, which a ``.grad`` may then alias: each parameter gets its own
    # ``.grad`` back, with its values.
    grads = [(t, t.grad, clone_tensors(t.grad)) for t in run.state_of(args, kwargs).values() if t.is_leaf and t.requires_grad]
    try:
        with silenced():
            return _measure_on(run, index, sets, state, make)
    finally:
        state.restore()
        for t, grad, values in grads:
            t.grad = grad
            if grad is not None:
                grad.copy_(values)


def _measure_on(run: TargetRun, index: int, sets: list[tuple[tuple, dict]], state: UserState, make: Make | None) -> PartialCaptureEvent:
    args, kwargs = sets[0]
    try:
        calls = record_module_calls(lambda: run.fn(*args, **kwargs))
    except Exception as exc:
        return _not_measured(index, PartialSkip.RECORDING_FAILED, exc)
    finally:
        state.restore()
    candidates = sorted((c for c in calls if c.parameters > 0), key=lambda c: -c.parameters)
    if not candidates:
        return _not_measured(index, PartialSkip.NO_MODULE)
    rows: list[ModuleCandidate] = []
    measured: Measured | None = None
    for call in candidates:
        if measured is not None or len(rows) >= MAX_TRIED:
            rows.append(candidate_row(call, PartialSkip.NOT_TRIED))
            continue
        measured, row = _try(run, call, sets, state, make)
        rows.append(row)
    if measured is None:
        return _not_measured(index, PartialSkip(rows[0].reason), None, rows)
    return _event(index, measured, rows)


def unsuitable(call: ModuleCall) -> PartialSkip | None:
    """Why ``make_graphed_callables`` cannot stand in for this module call, or None."""
    if call.calls > 1:
        return PartialSkip.CALLED_TWICE
    if call.keywords:
        return PartialSkip.KEYWORD_ARGUMENTS
    if not call.tensors_only:
        return PartialSkip.NON_TENSOR_ARGUMENTS
    if has_hooks(call.module):
        return PartialSkip.HOOKS
    if not on_gpu([t for _, t in tensor_leaves(call.samples)] + list(call.module.parameters())):
        return PartialSkip.NOT_CUDA
    return None


def on_gpu(tensors: list[torch.Tensor]) -> bool:
    """Graphs hold CUDA work only: the module's parameters and samples must be there."""
    return all(t.is_cuda for t in tensors)


def candidate_row(call: ModuleCall, reason: PartialSkip | None, exc: BaseException | None = None) -> ModuleCandidate:
    return ModuleCandidate(
        module=call.expr, module_type=type(call.module).__name__, parameters=call.parameters, site=call.site,
        reason=reason.value if reason is not None else None, error=f"{type(exc).__name__}: {str(exc)[:300]}" if exc is not None else None,
    )  # fmt: skip


def _try(run: TargetRun, call: ModuleCall, sets: list[tuple[tuple, dict]], state: UserState, make: Make | None) -> tuple[Measured | None, ModuleCandidate]:
    why = unsuitable(call)
    if why is not None:
        return None, candidate_row(call, why)
    try:
        switch = graph_module(call.module, call.samples, call.autocast, call.grad_enabled, make)
    except Exception as exc:
        state.restore()  # its warm-up ran the module's forward and backward
        return None, candidate_row(call, PartialSkip.GRAPHING_FAILED, exc)
    try:
        state.restore()
        switch.install()
        fields = compared(run, sets, switch, state)
        timings = Collected()
        run_bursts([Kind("eager", step_calls(run, sets, switch, False)), Kind("graphed", step_calls(run, sets, switch, True))], run.config.repeat, timings)
    except Exception as exc:
        return None, candidate_row(call, PartialSkip.STEP_FAILED, exc)
    finally:
        switch.restore()
        state.restore()
    return Measured(call, switch.setup_us, timings, fields), candidate_row(call, None)


def step_calls(run: TargetRun, sets: list[tuple[tuple, dict]], switch: GraphedForward, graphed: bool) -> list[Any]:
    """One zero-argument call of the user's step per argument set, the switch set first:
    both kinds run the same code, so the switch costs each the same."""

    def one(args: tuple, kwargs: dict) -> Any:
        def call() -> Any:
            switch.use_graph = graphed
            return run.fn(*args, **kwargs)

        return call

    return [one(a, k) for a, k in sets]


def compared(run: TargetRun, sets: list[tuple[tuple, dict]], switch: GraphedForward, state: UserState) -> dict[str, Any]:
    """One call eager and one with the module graphed, from the same state: the outputs and
    every tensor the step mutates (the optimizer's update shows the backward's gradients)."""
    args, kwargs = sets[0]
    mutated = protected_tensors(run, sets)
    switch.use_graph = False
    eager_out = clone_tensors(run.fn(*args, **kwargs))
    eager_state = clone_tensors(mutated)
    state.restore()
    switch.install()
    switch.use_graph = True
    graphed_out = clone_tensors(run.fn(*args, **kwargs))
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    diffs = compare_trees(eager_out, graphed_out, "output") + compare_trees(eager_state, mutated, "state")
    state.restore()
    switch.install()
    return summarise(diffs)


def _event(index: int, m: Measured, rows: list[ModuleCandidate]) -> PartialCaptureEvent:
    call = m.call
    args = []
    for i, value in enumerate(call.samples):
        expr = call.arg_exprs[i] if i < len(call.arg_exprs) else None
        for path, t in leaves(value):
            if isinstance(t, torch.Tensor):
                name = expr if path == "" else None
                args.append(SampleArgRow(expr=name, shape=list(t.shape), dtype=str(t.dtype).removeprefix("torch."), requires_grad=bool(t.requires_grad)))
    return PartialCaptureEvent(
        index=index, status=STATUS_MEASURED, module=call.expr, module_type=type(call.module).__name__,
        parameters=call.parameters, site=call.site, args=args, autocast=call.autocast, grad_enabled=call.grad_enabled,
        setup_us=m.setup_us, eager_us=m.timings.wall.get("eager", []), graphed_us=m.timings.wall.get("graphed", []),
        eager_gpu_us=m.timings.gpu.get("eager", []), graphed_gpu_us=m.timings.gpu.get("graphed", []),
        match=bool(m.fields["match"]), max_abs_diff=m.fields["max_abs_diff"], candidates=rows,
    )  # fmt: skip
