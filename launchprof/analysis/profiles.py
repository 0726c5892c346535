"""The eager and replay sections of the report, from the evidence and the trace tables."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from launchprof.analysis.timing import eager_samples, loop_stats, replay_samples, setup_us
from launchprof.events.capture_events import MemoryEvent
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note
from launchprof.model.step_timing import EagerProfile, ReplayProfile, Validation
from launchprof.model.stats import stats_of

if TYPE_CHECKING:  # the trace tables (pandas) load with the first trace read
    from launchprof.common.trace_tables import CallProfile


def eager_profile(ev: Evidence, calls: list[CallProfile]) -> EagerProfile | None:
    timed = eager_samples(ev)
    if not timed.samples and not calls:
        return None
    busy = [c.busy_us for c in calls]
    idle = [1.0 - c.busy_us / c.span_us for c in calls if c.span_us > 0]
    gaps = [g for c in calls for g in c.gaps_us]
    return EagerProfile(
        step_us=stats_of(timed.samples),
        # Calls of one step normally agree exactly; with data-dependent flow, the first call's count.
        kernels_per_step=calls[0].kernels if calls else None,
        gpu_busy_us=statistics.median(busy) if busy else None,
        gpu_idle_fraction=statistics.median(idle) if idle else None,
        launch_gap_us=stats_of(gaps),
        launch_api_us=statistics.median([c.launch_api_us for c in calls]) if calls else None,
        gpu_span_us=stats_of(timed.gpu),
        memcpys_per_step=calls[0].memcpys if calls else None,
        kernel_us=stats_of([k for c in calls for k in c.kernel_us]),
        samples_us=list(timed.samples),
        timing=timed.timing,
        in_loop_step_us=loop_stats(timed),
    )


def launchprof_bytes(memory: MemoryEvent | None) -> int | None:
    """GPU memory launchprof itself adds: its static input buffers and one output clone."""
    if memory is None:
        return None
    known = [p for p in (memory.static_bytes, memory.clone_bytes) if p is not None]
    return sum(known) if known else None


def replay_profile(ev: Evidence) -> ReplayProfile | None:
    cap = ev.capture
    if cap is None or not cap.ok:
        return None
    timed = replay_samples(ev)
    memory = ev.memory
    return ReplayProfile(
        step_us=stats_of(timed.samples),
        graph_nodes=cap.graph_nodes,
        instantiate_us=cap.instantiate_us,
        # The graph's own increment; the memory event, written after replays, has the final figure.
        pool_bytes=memory.pool_bytes if memory is not None else cap.pool_bytes,
        capture_us=cap.capture_us,
        node_types=cap.node_types,
        gpu_span_us=stats_of(timed.gpu),
        samples_us=list(timed.samples),
        timing=timed.timing,
        in_loop_step_us=loop_stats(timed),
        clone_us=stats_of(ev.burst_wall_us.get("clone", [])),
        workspace_bytes=memory.workspace_bytes if memory is not None else cap.workspace_bytes,
        launchprof_bytes=launchprof_bytes(ev.memory),
        setup_us=setup_us(cap),
        warmup_us=cap.warmup_us,
    )


def validation_of(ev: Evidence) -> Validation | None:
    if not ev.validations:
        return None
    diffs = [v.max_abs_diff for v in ev.validations if v.max_abs_diff is not None]
    return Validation(
        calls_compared=len(ev.validations),
        matches=sum(1 for v in ev.validations if v.match),
        max_abs_diff=max(diffs) if diffs else None,
    )


def calibration_note(ev: Evidence) -> Note | None:
    """Say whether a quick device profile was measured for the prediction, and where it is."""
    cal = ev.calibration
    if cal is None:
        return None
    status, where = cal.status, cal.path
    if status == "measured":
        secs = cal.seconds
        return note(NoteCode.CALIBRATION_MEASURED, seconds=secs if isinstance(secs, (int, float)) else None, path=where or None)
    if status == "skipped":
        return note(NoteCode.CALIBRATION_SKIPPED)
    if status == "failed":
        return note(NoteCode.CALIBRATION_FAILED, message=cal.message or None)
    return None
