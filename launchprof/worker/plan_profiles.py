"""The plan's profiler sessions: the eager calls of the profile phase, one replay, and the
recorded eager calls profiled after the plan.

Where the eager calls are profiled from the start (worker/profiler_choice.py), the profile
phase runs the user's calls inside one session and the first timed replay is profiled once.
Where they are not, the phase records the calls' op sequences instead, and the plan profiles
its recorded eager argument sets once it has closed, after the bursts and the fix trials
(so nothing timed runs under CUPTI), where a figure has no other source: no graph was
captured, or the profiled calls took different paths (differing op sequences).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.lifecycle_events import NoteEvent, ProfilerPlanEvent
from launchprof.events.timing_events import TraceEvent
from launchprof.model.findings import NoteCode, RestoredAfter
from launchprof.worker.cupti import lost_device_activity, tear_down_after_profiling
from launchprof.worker.nvtx_ranges import nvtx_range
from launchprof.worker.plan_bursts import silenced
from launchprof.worker.plan_phases import FINISH_REASONS, Exit
from launchprof.worker.plan_state import put_back, save
from launchprof.worker.profiler_tables import new_profile, write_table

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun


def profile_replay(run: TargetRun, args: tuple, kwargs: dict) -> None:
    """One replay under the profiler. Replaying the same data twice is harmless only if the
    step does not mutate its state, so this runs on a snapshot that is restored afterwards."""
    from torch.profiler import record_function

    run.profiled_replay = True
    snap = save(run, [(args, kwargs)])
    try:
        torch.cuda.synchronize()
        with new_profile() as prof:
            with record_function("launchprof/replay"), record_function("launchprof/call0"):
                run.run_graph(args, kwargs)
                torch.cuda.synchronize()
        path = write_table(prof, run.run_dir(), "replay")
    finally:
        put_back(run, snap, RestoredAfter.PROFILED_REPLAY)  # the extra replay must not advance the user's state, whatever failed
    run.events.write(TraceEvent(path=path, calls=1, what="replay"))


def ask_teardown(run: TargetRun) -> None:
    """CUPTI teardown before a session of the eager calls: else whatever is timed after it
    would time CUPTI's callbacks too (worker/cupti.py); a CUDA too old for it is a note."""
    old_cuda = tear_down_after_profiling()
    if old_cuda:
        run.events.write(NoteEvent(text=old_cuda))


def profile_call(run: TargetRun, call: Callable[[], Any]) -> Any:
    """One profile-phase call inside the phase's session, which its first call opens; the
    call is ``launchprof/callN`` (N its place in the phase) inside ``launchprof/eager``."""
    from torch.profiler import record_function

    if run.profiler is None:
        ask_teardown(run)
        run.profiler = new_profile()
        torch.cuda.synchronize()
        run.profiler.__enter__()
    with nvtx_range("eager"), record_function("launchprof/eager"), record_function(f"launchprof/call{run.in_phase}"):
        out = call()
        torch.cuda.synchronize()
    return out


def finish_profile(run: TargetRun, retry: bool = True) -> bool:
    """Close the eager profiler and write its trace; False (once) when the session lost
    all GPU activity (worker/cupti.py) and the calls are to be profiled again. The lost
    session is kept until then: a script that stops calling first gets it written, as
    ``may_be_lost`` (a lost session and a step with no CUDA work look alike; the analysis
    calls the counts unknown). Empty after the retake is a step with no GPU work."""
    if run.profiler is not None:
        prof, run.profiler = run.profiler, None
        prof.__exit__(None, None, None)
        lost = lost_device_activity(prof)
        if retry and not run.reprofiled and lost:
            run.reprofiled, run.discarded = True, (prof, run.in_phase)
            return False
        calls, may_be_lost = run.in_phase, lost and not run.reprofiled
    elif run.discarded is not None:  # lost, and the script stopped before the retake began
        (prof, calls), may_be_lost = run.discarded, True
    else:
        return True
    run.discarded = None
    path = write_table(prof, run.run_dir(), "eager")
    run.events.write(TraceEvent(path=path, calls=calls, what="eager", may_be_lost=may_be_lost))
    return True


def late_reason(run: TargetRun, finish_reason: str) -> str | None:
    """Why the recorded eager calls are profiled after the plan, or None: they were profiled
    from the start, a graph was captured and its profile-phase calls ran the same ops."""
    if run.profiling is not None:
        return None
    if run.captured is None:
        return "capture-failed" if finish_reason == FINISH_REASONS[Exit.CAPTURE_FAILED] else "no-graph"
    if len(set(run.op_digests)) > 1:
        return "ops-differ"
    if run.captured.graph_nodes is None:  # the graph could not be read (no node types): no other source
        return "no-graph-nodes"
    return None


def profile_after_plan(run: TargetRun, finish_reason: str) -> None:
    """The recorded eager argument sets profiled once, where ``late_reason`` says a figure
    needs it, with a ``profiler-plan`` event that says why. Prints are silenced and a failure
    is a note: this runs inside the script's call of the target, or at its end."""
    reason = late_reason(run, finish_reason)
    sets = list(run.eager_sets)
    if reason is None or not sets:
        return
    busy, run.busy = run.busy, True  # a call of the target from inside the step runs it untouched
    try:
        with silenced():
            profile_eager_sets(run, sets)
        run.events.write(ProfilerPlanEvent(profiled=True, reason=reason, when="after-plan"))
    except Exception as exc:  # never raise into the user's script
        run.events.write(NoteEvent(code=NoteCode.TRACE_NOT_WRITTEN, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
    finally:
        run.busy = busy


def profile_eager_sets(run: TargetRun, sets: list[tuple[tuple, dict]]) -> None:
    """One eager call on each set in one session, on a snapshot put back afterwards (the
    user's arguments and state may have been mutated since: the calls must not advance them
    again). A session that lost all GPU activity is taken once more, as in the plan."""
    ask_teardown(run)
    for attempt in range(2):
        prof = _profiled_sets(run, sets)
        if not (attempt == 0 and lost_device_activity(prof)):
            break
        run.events.write(NoteEvent(code=NoteCode.REPROFILED))
    path = write_table(prof, run.run_dir(), "eager")
    run.events.write(TraceEvent(path=path, calls=len(sets), what="eager", may_be_lost=False))


def _profiled_sets(run: TargetRun, sets: list[tuple[tuple, dict]]) -> Any:
    from torch.profiler import record_function

    torch.cuda.synchronize()
    snap = save(run, sets)
    try:
        with new_profile() as prof:
            for i, (args, kwargs) in enumerate(sets):
                with nvtx_range("eager"), record_function("launchprof/eager"), record_function(f"launchprof/call{i}"):
                    run.fn(*args, **kwargs)
                    torch.cuda.synchronize()
    finally:
        try:
            torch.cuda.synchronize()
        finally:
            put_back(run, snap, RestoredAfter.PROFILED_EAGER)
    return prof
