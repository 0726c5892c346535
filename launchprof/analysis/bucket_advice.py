"""The ``buckets`` field of the report: the bucket plan from the recorded shapes and the
worker's ``bucket-*`` events (worker/buckets.py, docs/worker-events.md).

Without those events (a run made before they existed, or one where the measurement could
not run) the plan is still recommended from the shapes, and says it was not measured.
Returns data; never prints.
"""

from __future__ import annotations

import collections
from typing import TypeVar

from launchprof.common.bucket_rule import DEFAULT_MEMORY_BYTES, BatchAxis, batch_axis, bucket_of, default_sizes, eager_calls, explain, fit_memory, padding_waste, paste_snippet
from launchprof.events.bucket_events import BucketCheckEvent, BucketEndEvent, BucketEvent, BucketLeakEvent, BucketMeasureEvent, BucketPlanEvent
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note
from launchprof.hazards.shapes import varying_shapes
from launchprof.render.words.notes_text import note_text, note_texts
from launchprof.model.bucket_plan import BucketArgument, BucketMeasure, BucketPlan, BucketSpeedup, PaddingLeak
from launchprof.model.stats import speedup_of

E = TypeVar("E", bound=BucketEvent)


def _events(ev: Evidence, kind: type[E]) -> list[E]:
    return [e for e in ev.buckets if isinstance(e, kind)]


def _last(ev: Evidence, kind: type[E]) -> E | None:
    found = _events(ev, kind)
    return found[-1] if found else None


def _by_size(ev: Evidence, stage: str) -> dict[int, BucketMeasureEvent]:
    return {e.size: e for e in _events(ev, BucketMeasureEvent) if e.stage == stage and e.size is not None}


def _plan_sizes(ev: Evidence, axis: BatchAxis) -> tuple[list[int], str, int]:
    """(the full plan, its source, the memory limit), as the worker chose them if it ran."""
    plan = _last(ev, BucketPlanEvent) or BucketPlanEvent()
    sizes = [s for s in plan.sizes if s > 0]
    source = str(plan.source or "default")
    limit = plan.limit_bytes or DEFAULT_MEMORY_BYTES
    return (sizes or default_sizes(max(axis.sizes))), (source if sizes else "default"), limit


def _kept(ev: Evidence, sizes: list[int], limit: int) -> tuple[list[int], list[int]]:
    end = _last(ev, BucketEndEvent)
    if end is not None and end.kept:
        return sorted(end.kept), sorted(end.dropped)
    private = {s: e.pool_bytes or 0 for s, e in _by_size(ev, "private").items()}
    return fit_memory(sizes, private, limit) if private else (sorted(sizes), [])


def _checks(ev: Evidence, size: int) -> bool | None:
    found = [bool(c.match) for c in _events(ev, BucketCheckEvent) if c.size == size]
    return all(found) if found else None


def _measures(ev: Evidence, kept: list[int], seen: list[int]) -> list[BucketMeasure]:
    private, shared = _by_size(ev, "private"), _by_size(ev, "shared")
    served = collections.Counter(bucket_of(n, kept) for n in seen)
    out = []
    for size in kept:
        p, s = private.get(size), shared.get(size)
        if p is None and s is None:
            continue
        capture = s.capture_ms if s is not None else p.capture_ms if p is not None else None
        out.append(BucketMeasure(
            size=size,
            capture_ms=capture,
            replay_us=s.replay_us if s is not None else None,
            pool_bytes=p.pool_bytes if p is not None else None,
            shared_added_bytes=s.added_bytes if s is not None else None,
            calls=served.get(size, 0),
            matches=_checks(ev, size),
        ))
    return out


def _leaks(ev: Evidence) -> list[PaddingLeak]:
    out = []
    for e in _events(ev, BucketLeakEvent):
        if e.size is not None and e.calls_size is not None:
            out.append(PaddingLeak(
                output=str(e.output or "output"), size=e.size, calls_size=e.calls_size, max_abs_diff=e.max_abs_diff,
                file=e.file, line=e.line, code=e.code, op=e.op,
            ))
    return out


def _speedup(end: BucketEndEvent | None) -> BucketSpeedup | None:
    result = speedup_of(end.eager_us if end else [], end.plan_us if end else [])
    if result is None:
        return None
    return BucketSpeedup(median=result.median, low=result.low, high=result.high)


def _safety(ev: Evidence, leaks: list[PaddingLeak]) -> bool | None:
    checks = _events(ev, BucketCheckEvent)
    if not checks:
        return None
    return all(bool(c.match) for c in checks) and not leaks


def _notes(ev: Evidence, axis: BatchAxis, shared: int | None, limit: int, measured: bool) -> list[Note]:
    notes: list[Note] = []
    if not measured:
        notes.append(note(NoteCode.BUCKETS_NOT_MEASURED))
    if shared is not None and shared > limit:
        notes.append(note(NoteCode.BUCKET_POOL_OVER_LIMIT, shared_pool_bytes=shared, limit_bytes=limit))
    if axis.others:
        notes.append(note(NoteCode.BUCKETS_OTHERS_VARY, arguments=[p for p, _ in axis.others], dims=[d for _, d in axis.others]))
    return notes


def bucket_plan(ev: Evidence) -> BucketPlan | None:
    """The plan for the varying dimension of the target's arguments, or None if none varies."""
    axis = batch_axis(varying_shapes(ev))
    if axis is None:
        return None
    sizes, source, limit = _plan_sizes(ev, axis)
    kept, dropped = _kept(ev, sizes, limit)
    end = _last(ev, BucketEndEvent)
    measured = _measures(ev, kept, axis.sizes)
    leaks = _leaks(ev)
    safe = _safety(ev, leaks)
    shared = end.shared_pool_bytes if end else None
    step = str((ev.target.name if ev.target else None) or "step").split(".")[-1].split(":")[-1]
    findings = _notes(ev, axis, shared, limit, bool(measured))
    choice = explain(source, axis.sizes, kept, dropped, limit)
    fix = note(NoteCode.PADDING_LEAKS) if safe is False else None
    return BucketPlan(
        arguments=[BucketArgument(argument=p, dim=d) for p, d in axis.arguments],
        recommended=kept,
        measured=measured,
        shared_pool_bytes=shared,
        private_pool_bytes=end.private_pool_bytes if end else None,
        workspace_bytes=end.workspace_bytes if end else None,
        padding_waste=padding_waste(axis.sizes, kept),
        padding_safe=safe,
        speedup=_speedup(end),
        explanation=note_text(choice),
        explanation_finding=choice,
        source=source,
        observed=dict(sorted(collections.Counter(axis.sizes).items())),
        eager_above=max(kept) if kept else None,
        eager_calls=eager_calls(axis.sizes, kept),
        dropped=dropped,
        memory_limit_bytes=limit,
        leaks=leaks,
        fix=note_text(fix) if fix is not None else None,
        fix_finding=fix,
        snippet=paste_snippet(axis.arguments, kept, step),
        others=[BucketArgument(argument=p, dim=d) for p, d in axis.others],
        notes=note_texts(findings),
        findings=findings,
    )
