"""The worker's events as typed records: written by the worker, read by the analysis.

One frozen dataclass per event type (docs/worker-events.md), its ``TYPE`` the event's
``type`` string. Stdlib only, because the worker imports it inside the user's process;
:mod:`launchprof.run.event_log` validates the JSON lines back into these same classes.
"""

from __future__ import annotations

from launchprof.events import bucket_events as buckets, capture_events as capture, lifecycle_events as lifecycle, observation_events as observation, timing_events as timing, compile_events as torch_compile, training_events as training, fix_events as fixes
from launchprof.events.record import Event, Site

# The event types the analysis reads, by their ``type``; a reader drops any other.
RECORDS: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (
        lifecycle.RankEvent,
        lifecycle.MachineEvent,
        lifecycle.EnvironmentEvent,
        lifecycle.CalibrationEvent,
        lifecycle.TargetEvent,
        lifecycle.TargetProblemEvent,
        lifecycle.CallSiteEvent,
        lifecycle.ScriptEndEvent,
        lifecycle.WorkerEndEvent,
        lifecycle.PhaseEvent,
        lifecycle.PlanEndEvent,
        lifecycle.NoteEvent,
        lifecycle.ProfilerPlanEvent,
        lifecycle.InternalErrorEvent,
        lifecycle.CandidatesEvent,
        timing.TimingStartEvent,
        timing.TimingEvent,
        timing.TimingEndEvent,
        timing.EagerTimingEvent,
        timing.ReplayTimingEvent,
        timing.HostSpeedEvent,
        timing.TraceEvent,
        capture.CaptureEvent,
        capture.MemoryEvent,
        capture.ValidationEvent,
        capture.AnatomyEvent,
        capture.RaceCheckEvent,
        observation.CallEvent,
        observation.MutationsEvent,
        observation.StateReallocEvent,
        observation.FallbackEvent,
        observation.ProbeEvent,
        observation.OutputsEvent,
        observation.KeptOutputEvent,
        observation.LoopBackEvent,
        observation.OpSequenceEvent,
        buckets.BucketPlanEvent,
        buckets.BucketMeasureEvent,
        buckets.BucketCheckEvent,
        buckets.BucketLeakEvent,
        buckets.BucketEndEvent,
        torch_compile.CompileStartEvent,
        torch_compile.CompileEvent,
        training.KeptGraphEvent,
        training.PartialCaptureEvent,
        fixes.FixTrialEvent,
    )
}

__all__ = ["RECORDS", "Event", "Site"]
