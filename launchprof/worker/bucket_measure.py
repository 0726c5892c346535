"""Measuring the bucket plan on the GPU when the target's shapes varied: pools estimated from one graph read 4x high.

The seeds' "bucketed LLM decode" recipe, run on the user's own step and recorded calls:
one graph per capture size, each call padded up to the next size and its outputs sliced
back, every graph captured largest first into one shared pool, calls above the largest
size run eagerly. For every size this measures capture + instantiate time, replay time and
the graph's own pool (captured alone into a private pool, after one capture that absorbs
the one-time library workspaces, as worker/memory.py does); then the shared pool; then
whether padding changes the real rows (and if so, at which line), and the observed call
sequence replayed through the plan against eager.

Runs once, from ``TargetRun.finish`` after the timing bursts. Every extra call is undone
for the script (worker/plan_bursts.UserState); any failure becomes a ``note`` event and
the run goes on. Events: ``bucket-plan``, ``bucket-measure``, ``bucket-check``,
``bucket-leak``, ``bucket-end`` (docs/worker-events.md).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from launchprof.common.bucket_rule import batch_axis, bucket_of, default_sizes, fit_memory
from launchprof.worker.bucket_inputs import (
    CallSet,
    Padder,
    derived_set,
    named_leaves,
    observed_history,
    output_dims,
    padded_set,
    recorded_sets,
    run_pairs,
    sliced,
)
from launchprof.worker.bucket_leak import locate_leak
from launchprof.worker.graph_release import release_again
from launchprof.worker.memory import pool_bytes, pool_segment_bytes
from launchprof.worker.plan_bursts import UserState, protected_tensors, silenced
from launchprof.worker.rank_sync import distributed
from launchprof.worker.trees import clone_tensors, leaves
from launchprof.worker.validator import Snapshot
from launchprof.events.bucket_events import BucketArgumentRow, BucketCheckEvent, BucketEndEvent, BucketLeakEvent, BucketMeasureEvent, BucketPlanEvent
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import BucketsUnmeasurable, NoteCode, RestoredAfter

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

REPLAY_REPS = 20  # synchronised replays per size for its replay time
SEQUENCE_ROUNDS = 10  # whole observed sequences timed per side (eager, plan)
MAX_SEQUENCE = 200  # calls of the observed sequence replayed
TIME_CAP_S = 20.0  # the sequence timing stops after this long
# More capture sizes than this are not measured (two captures and a check each): the default
# rule gives 1, 2, 4, 8 then every multiple of 8, so a size that varies up to 4096 (a prompt
# length) would otherwise mean 500+ captures inside every analyze run.
MAX_MEASURED_SIZES = 128
# (rtol, atol): the validator's rtol with torch.testing's atol, since a padded call runs other
# kernel shapes than the real one (float32 sums in another order); looser for half types.
_TOLERANCE = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}
_FLOAT_TOLERANCE = (1e-4, 1e-5)


@dataclass
class Setup:
    axis: list[tuple[str, int]]
    sizes: list[int]
    source: str
    limit: int
    sequence: list[int]
    real: list[CallSet]
    moved: list[str]


@dataclass
class Plan:
    """The shared-pool graphs of the kept sizes, with what replaying them needs."""

    kept: list[int]
    padders: dict[int, Padder]
    graphs: dict[int, torch.cuda.CUDAGraph] = field(default_factory=dict)
    outs: dict[int, Any] = field(default_factory=dict)
    dims: dict[int, list[int | None]] = field(default_factory=dict)


def measure_buckets(run: TargetRun) -> None:
    """Measure the bucket plan if the target's shapes varied. Never raises."""
    try:
        setup = _setup(run)
        if setup is None:
            return
        state = UserState(run, [(c.args, c.kwargs) for c in setup.real], after=RestoredAfter.BUCKETS)
    except Exception as exc:
        run.events.write(NoteEvent(code=NoteCode.BUCKETS_NOT_SET_UP, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        return
    try:
        with silenced():
            _measure(run, setup)
    except Exception as exc:
        from launchprof.worker.capture import recover_after_failed_capture

        recover_after_failed_capture()
        run.events.write(NoteEvent(code=NoteCode.BUCKET_MEASUREMENT_STOPPED, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
    finally:
        try:
            state.restore()
            torch.cuda.empty_cache()
        except Exception as exc:
            run.events.write(NoteEvent(code=NoteCode.STATE_NOT_RESTORED, params={"after": RestoredAfter.BUCKETS.value, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}))


def _setup(run: TargetRun) -> Setup | None:
    history, _ = observed_history(run.config.events_path)
    axis = batch_axis({p: s for p, s in history.items() if len(set(s)) > 1})
    if axis is None:
        if run.config.buckets:  # asked for, so say why there is none
            run.events.write(NoteEvent(code=NoteCode.BUCKETS_SHAPES_SAME))
        return None
    sizes = list(run.config.buckets or default_sizes(max(axis.sizes)))
    source = "user" if run.config.buckets else "default"
    real = recorded_sets(run.fn, list(run.eager_sets) + list(run.replay_sets), axis.arguments)
    run.events.write(BucketPlanEvent(
        arguments=[BucketArgumentRow(argument=p, dim=d) for p, d in axis.arguments], sizes=sizes,
        source=source, limit_bytes=run.config.bucket_memory, recorded_sizes=sorted({c.size for c in real}),
    ))
    why = _unmeasurable(run, real, sizes)
    if why:
        run.events.write(NoteEvent(code=NoteCode.BUCKETS_UNMEASURABLE, params={"reason": why.value, "sizes": len(sizes)}))
        return None
    return Setup(axis.arguments, sizes, source, run.config.bucket_memory, axis.sizes, real, _moved(run, real))


def _unmeasurable(run: TargetRun, real: list[CallSet], sizes: list[int]) -> BucketsUnmeasurable | None:
    """Why the plan cannot be measured here, or None."""
    if run.captured is None:
        return BucketsUnmeasurable.NOT_CAPTURED
    if not real:
        return BucketsUnmeasurable.NO_RECORDED_CALL
    if len(sizes) > MAX_MEASURED_SIZES:
        return BucketsUnmeasurable.TOO_MANY_SIZES
    if distributed():
        # Every extra call would have to be made alike on every rank (captures, checks, the
        # timed sequence, a size that runs out of memory on one rank only): a collective in
        # the step would otherwise wait for ever.
        return BucketsUnmeasurable.DISTRIBUTED
    return None


def _moved(run: TargetRun, real: list[CallSet]) -> list[str]:
    """Tensor arguments that are a different tensor from call to call: they get a buffer."""
    ptrs: dict[str, set[int]] = {}
    for call in real:
        for p, t in named_leaves(run.fn, call.args, call.kwargs).items():
            if isinstance(t, torch.Tensor):
                ptrs.setdefault(p, set()).add(t.data_ptr())
    return sorted(p for p, seen in ptrs.items() if len(seen) > 1)


def _base(real: list[CallSet], size: int) -> CallSet:
    """The recorded call padded to fill ``size``'s buffers: the largest that fits, else the smallest."""
    fits = [c for c in real if c.size <= size]
    return max(fits, key=lambda c: c.size) if fits else min(real, key=lambda c: c.size)


def _measure(run: TargetRun, setup: Setup) -> None:
    # The caller keeps each eager call's output as it kept the one released before capture.
    release_again(run.outputs.graphs, {id(t) for c in setup.real for _, t in leaves((c.args, c.kwargs))})
    padders = {s: Padder(run.fn, _base(setup.real, s), setup.axis, setup.moved, s) for s in setup.sizes}
    # One warm-up stream for every capture: cuBLAS keeps a workspace (32 MiB on Hopper) per
    # stream it ran on for the rest of the process, so a new stream per capture would leave
    # up to 32 of them to the user's script.
    side = torch.cuda.Stream()
    own, workspace = _private_pools(run, padders, side)
    kept, dropped = fit_memory(setup.sizes, own, setup.limit)
    plan = Plan(kept, {s: padders[s] for s in kept})
    shared = _shared_pool(run, plan, side)
    failures = _checks(run, setup, plan)
    if failures:
        _leaks(run, setup, plan, failures[0])
    eager_us, plan_us = _sequence(run, setup, plan)
    run.events.write(BucketEndEvent(
        kept=kept, dropped=dropped, shared_pool_bytes=shared, workspace_bytes=workspace,
        private_pool_bytes=sum(own.get(s, 0) for s in kept), eager_us=eager_us, plan_us=plan_us,
        sequence_calls=min(len(setup.sequence), MAX_SEQUENCE),
    ))
    plan.graphs.clear()


def _capture(fn: Callable[..., Any], padder: Padder, side: Any, pool: Any = None) -> tuple[torch.cuda.CUDAGraph, Any, float]:
    """Warm up on side stream ``side``, then capture (+ instantiate) the padded call: the
    graph, its static outputs and the milliseconds capture and instantiate took."""
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn(*padder.args, **padder.kwargs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    t0 = time.perf_counter()
    out = _record(graph, pool, lambda: fn(*padder.args, **padder.kwargs))
    torch.cuda.synchronize()
    return graph, out, (time.perf_counter() - t0) * 1e3


def _record(graph: torch.cuda.CUDAGraph, pool: Any, call: Callable[[], Any]) -> Any:
    """Capture ``call`` into ``graph`` (instantiated on exit); its outputs are the graph's."""
    with torch.cuda.graph(graph, pool=pool, capture_error_mode="thread_local"):
        return call()


def _private_pools(run: TargetRun, padders: dict[int, Padder], side: Any) -> tuple[dict[int, int], int | None]:
    """Each size captured alone into its own pool, largest first, after one throwaway
    capture of the smallest: the graph's own bytes per size, and the one-time workspace.
    A size that runs out of memory counts as too large for any limit."""
    from launchprof.worker.capture import recover_after_failed_capture

    smallest = min(padders)
    graph, out, _ = _capture(run.fn, padders[smallest], side)
    first = pool_segment_bytes(graph) or 0
    del graph, out
    own: dict[int, int] = {}
    for size in sorted(padders, reverse=True):
        reserved = torch.cuda.memory_reserved()
        try:
            graph, out, ms = _capture(run.fn, padders[size], side)
        except torch.cuda.OutOfMemoryError:
            recover_after_failed_capture()
            own[size] = 2**62
            run.events.write(BucketMeasureEvent(stage="private", size=size, pool_bytes=None, error="out of memory"))
            continue
        own[size] = pool_segment_bytes(graph) or max(torch.cuda.memory_reserved() - reserved, 0)
        run.events.write(BucketMeasureEvent(stage="private", size=size, pool_bytes=own[size], capture_ms=ms,
                                            reserved_bytes=max(torch.cuda.memory_reserved() - reserved, 0)))
        del graph, out
    # The plan's own capture ran before and already holds the capture stream's workspace,
    # so this throwaway usually finds none: the one-time figure is the one measured there.
    found = max(first - own[smallest], 0)
    return own, found or getattr(run.captured, "workspace_bytes", None) or found


def _replay_us(graph: torch.cuda.CUDAGraph) -> float:
    """Median of synchronised replays (one untimed first)."""
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPLAY_REPS):
        t0 = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def _shared_pool(run: TargetRun, plan: Plan, side: Any) -> int:
    """The kept sizes captured largest first into one pool: what each adds, and the total."""
    pool = torch.cuda.graph_pool_handle()
    total = 0
    for size in sorted(plan.kept, reverse=True):
        graph, out, ms = _capture(run.fn, plan.padders[size], side, pool)
        plan.graphs[size], plan.outs[size] = graph, out
        now = pool_bytes(pool) or 0
        run.events.write(BucketMeasureEvent(stage="shared", size=size, capture_ms=ms, replay_us=_replay_us(graph),
                                            added_bytes=max(now - total, 0), pool_total_bytes=now))
        total = max(total, now)
    ordered = sorted(plan.kept)
    for i, size in enumerate(ordered):
        other = ordered[i - 1] if i else (ordered[1] if len(ordered) > 1 else None)
        plan.dims[size] = output_dims(plan.outs[size], size, plan.outs.get(other), other)
    return total


def _close(expected: Any, got: Any) -> tuple[bool, float, str | None]:
    """(all leaves equal within tolerance, largest difference, first differing output)."""
    worst, first = 0.0, None
    exp, act = list(leaves(expected, "output")), list(leaves(got, "output"))
    if len(exp) != len(act):
        return False, float("inf"), "output"
    for (path, e), (_, a) in zip(exp, act):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor):
            same = e == a if not isinstance(e, torch.Tensor) else False
        elif e.shape != a.shape:
            same = False
        elif e.is_floating_point():
            rtol, atol = _TOLERANCE.get(e.dtype, _FLOAT_TOLERANCE)
            worst = max(worst, float((e.double() - a.double()).abs().max()) if e.numel() else 0.0)
            same = bool(torch.allclose(e, a, rtol=rtol, atol=atol, equal_nan=True))
        else:
            same = bool(torch.equal(e, a))
        if not same and first is None:
            first = path
    return first is None, worst, first


def _check(run: TargetRun, call: CallSet, size: int, plan: Plan) -> dict[str, Any]:
    """The padded replay's real rows against eager on the same call, from the same state."""
    snap = Snapshot.take(protected_tensors(run, [(call.args, call.kwargs)]))
    torch.cuda.synchronize()
    expected = clone_tensors(run.fn(*call.args, **call.kwargs))
    torch.cuda.synchronize()
    snap.restore()
    run_pairs(plan.padders[size].copy_in(call))
    plan.graphs[size].replay()
    torch.cuda.synchronize()
    same, diff, worst = _close(expected, sliced(plan.outs[size], plan.dims[size], call.size))
    snap.restore()
    return {"size": size, "calls_size": call.size, "derived": call.derived, "match": same, "max_abs_diff": diff, "worst": worst}


def _calls_to_check(run: TargetRun, setup: Setup, kept: list[int]) -> list[tuple[CallSet, int]]:
    """(call, size) pairs: every recorded call a graph serves, at its size; and for each size
    above 1 that no recorded call pads, a call one row short of it, cut from a recorded one,
    so that every size is checked with padding."""
    pairs = [(c, size) for c in setup.real if (size := bucket_of(c.size, kept)) is not None]
    padded = {size for c, size in pairs if size != c.size}
    biggest = max(setup.real, key=lambda c: c.size)
    for size in kept:
        if size > 1 and size not in padded:
            pairs.append((derived_set(run.fn, biggest, setup.axis, size - 1), size))
    checked = {size for _, size in pairs}
    pairs += [(derived_set(run.fn, biggest, setup.axis, size), size) for size in kept if size not in checked]
    return pairs


def _checks(run: TargetRun, setup: Setup, plan: Plan) -> list[tuple[CallSet, dict[str, Any]]]:
    failures = []
    for call, size in _calls_to_check(run, setup, plan.kept):
        result = _check(run, call, size, plan)
        run.events.write(BucketCheckEvent(**result))
        if not result["match"]:
            failures.append((call, result))
    return failures


def _leaks(run: TargetRun, setup: Setup, plan: Plan, failure: tuple[CallSet, dict[str, Any]]) -> None:
    """Name the op and line where padding reaches the real rows (eager, traced, undone)."""
    call, result = failure
    padded = padded_set(run.fn, call, setup.axis, result["size"])
    snap = Snapshot.take(protected_tensors(run, [(call.args, call.kwargs)]))

    def once(c: CallSet) -> Callable[[], Any]:
        def go() -> Any:
            try:
                return run.fn(*c.args, **c.kwargs)
            finally:
                torch.cuda.synchronize()
                snap.restore()
        return go

    ops = locate_leak(once(call), once(padded))
    base = {"size": result["size"], "calls_size": call.size, "output": result["worst"], "max_abs_diff": result["max_abs_diff"]}
    for op in ops[:3] or [None]:
        site = (op.site or {}) if op else {}
        run.events.write(BucketLeakEvent(**base, op=op.name if op else None, file=site.get("file"), line=site.get("line"), code=site.get("code")))


def _timed(steps: list[Callable[[], Any]]) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in steps:
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e6


def _sequence(run: TargetRun, setup: Setup, plan: Plan) -> tuple[list[float], list[float]]:
    """The observed sizes, in order, run eagerly and through the plan (pad, replay, slice;
    eager above the largest size), timed as whole sequences, alternating which goes first."""
    seq = setup.sequence[:MAX_SEQUENCE]
    biggest = max(setup.real, key=lambda c: c.size)
    by_size = {c.size: c for c in setup.real if not c.derived}
    calls = {n: by_size.get(n) or derived_set(run.fn, biggest, setup.axis, n) for n in set(seq)}
    fn = run.fn

    def eager(c: CallSet) -> Callable[[], Any]:
        return lambda: fn(*c.args, **c.kwargs)

    def replay(c: CallSet, size: int) -> Callable[[], Any]:
        pairs, graph, out, dims, n = plan.padders[size].copy_in(c), plan.graphs[size], plan.outs[size], plan.dims[size], c.size

        def go() -> Any:
            run_pairs(pairs)
            graph.replay()
            return sliced(out, dims, n)
        return go

    eager_steps = [eager(calls[n]) for n in seq]
    plan_steps = [replay(calls[n], b) if (b := bucket_of(n, plan.kept)) else eager(calls[n]) for n in seq]
    _timed(eager_steps), _timed(plan_steps)  # warm: first calls, lazy allocations
    eager_us: list[float] = []
    plan_us: list[float] = []
    start = time.perf_counter()
    for r in range(SEQUENCE_ROUNDS):
        for kind in ("eager", "plan") if r % 2 == 0 else ("plan", "eager"):
            (eager_us if kind == "eager" else plan_us).append(_timed(eager_steps if kind == "eager" else plan_steps))
        if time.perf_counter() - start > TIME_CAP_S:
            break
    return eager_us, plan_us
