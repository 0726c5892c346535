"""The plan's profiled replay: one replay under torch.profiler, for the timeline and the
replay kernel count (the eager profiled calls stay in the plan, where the user's calls
drive them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from launchprof.events.timing_events import TraceEvent
from launchprof.model.findings import RestoredAfter
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
