"""The worker's event log, parsed into one immutable record the analysis reads.

Everything after this point runs in the CLI process without torch: hazard rules,
statistics and rendering work the same on a CI runner from recorded events. Events are
checked by :mod:`launchprof.run.event_log` first; types this launchprof does not know are
dropped there.
"""

from __future__ import annotations

import dataclasses
import platform
import statistics
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from launchprof.events.record import Event as Record
from launchprof.events.bucket_events import BucketEvent
from launchprof.events.capture_events import AnatomyEvent, CaptureEvent, MemoryEvent, RaceCheckEvent, ValidationEvent
from launchprof.events.lifecycle_events import CalibrationEvent, CallSiteEvent, CandidateRow, CandidatesEvent, EnvironmentEvent, InternalErrorEvent, MachineEvent, NoteEvent, PhaseEvent, PlanEndEvent, ProfilerPlanEvent, ScriptEndEvent, TargetEvent, TargetProblemEvent, WorkerEndEvent
from launchprof.events.observation_events import CallEvent, FallbackEvent, KeptOutputEvent, LoopBackEvent, MutationsEvent, OpSequenceEvent, OutputsEvent, ProbeEvent, StateReallocEvent
from launchprof.events.timing_events import EagerTimingEvent, HostSpeedEvent, ReplayTimingEvent, TimingEndEvent, TimingEvent, TimingStartEvent, TraceEvent
from launchprof.events.compile_events import CompileEvent
from launchprof.events.training_events import KeptGraphEvent, PartialCaptureEvent
from launchprof.events.fix_events import FixTrialEvent
from launchprof.errors import UsageError
from launchprof.model.findings import Note, NoteCode, note, text_note
from launchprof.model.core import Machine
from launchprof.run.event_log import validate_events


@dataclass(frozen=True)
class Evidence:
    machine: Machine | None = None
    environment_problem: str | None = None
    calibration: CalibrationEvent | None = None
    target: TargetEvent | None = None
    target_problem: str | None = None
    call_site: CallSiteEvent | None = None
    calls: list[CallEvent] = field(default_factory=list)
    mutations: MutationsEvent = field(default_factory=MutationsEvent)
    host_eager_op_us: float | None = None  # the profile's eager-op loop, sampled between the bursts (older runs: after them)
    host_op_slopes: list[float] = field(default_factory=list)  # µs per op of each sample pair of that loop
    # In-loop timings: the calls the script itself made (labelled "in-loop" in reports).
    eager_wall_us: list[float] = field(default_factory=list)
    eager_gpu_us: list[float] = field(default_factory=list)
    # Eager calls timed between replays (same period of the run as the replays).
    interleaved_wall_us: list[float] = field(default_factory=list)
    replay_wall_us: list[float] = field(default_factory=list)
    replay_gpu_us: list[float] = field(default_factory=list)
    # Burst timings (`timing` events): kind (eager, replay, clone) -> samples, in burst order.
    burst_wall_us: dict[str, list[float]] = field(default_factory=dict)
    burst_gpu_us: dict[str, list[float]] = field(default_factory=dict)
    # Each burst's median wall time, per kind: how far the step drifted during the run.
    burst_medians_us: dict[str, list[float]] = field(default_factory=dict)
    timing_ends: list[TimingEndEvent] = field(default_factory=list)
    timing_starts: list[TimingStartEvent] = field(default_factory=list)  # with `sets` per kind (newer workers)
    traces: dict[str, str] = field(default_factory=dict)
    # Traces that recorded no GPU activity under teardown and were not taken again: lost, or
    # of a step with no CUDA work (worker/plan_profiles.py finish_profile); runs before this say nothing.
    lost_traces: list[str] = field(default_factory=list)
    # Whether the worker ran torch.profiler on the target, and why (at its first call, then
    # after the plan where it profiled the eager calls late); empty for runs recorded before.
    profiler_plan: list[ProfilerPlanEvent] = field(default_factory=list)
    # The aten op digests of the profile-phase calls run without the profiler.
    op_sequences: list[OpSequenceEvent] = field(default_factory=list)
    probe: ProbeEvent | None = None
    capture: CaptureEvent | None = None
    anatomy: AnatomyEvent | None = None  # the captured graph's nodes and edges
    race_check: RaceCheckEvent | None = None  # the sanitizer pass (worker/race_check.py)
    memory: MemoryEvent | None = None
    validations: list[ValidationEvent] = field(default_factory=list)
    fallbacks: list[FallbackEvent] = field(default_factory=list)
    state_reallocs: list[StateReallocEvent] = field(default_factory=list)
    # Outputs the user kept past the next call, and arguments that were the previous output.
    kept_outputs: list[KeptOutputEvent] = field(default_factory=list)
    loop_backs: list[LoopBackEvent] = field(default_factory=list)
    outputs: OutputsEvent | None = None
    buckets: list[BucketEvent] = field(default_factory=list)  # bucket-* events (worker/buckets.py)
    plan_end: PlanEndEvent | None = None
    script_end: ScriptEndEvent | None = None
    worker_end: WorkerEndEvent | None = None
    phases: list[PhaseEvent] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # the worker's own notes, as records
    internal_error: str | None = None
    # Filled by the analysis from the eager trace: kernel names per profiled call.
    kernel_sequences: list[list[str]] = field(default_factory=list)
    compiles: list[CompileEvent] = field(default_factory=list)  # --compare compile, one per mode and round
    candidates: list[CandidateRow] = field(default_factory=list)  # whole-script mode: targets worth analysing
    kept_graph: KeptGraphEvent | None = None  # a kept autograd graph released so that capture could be retried
    partial_capture: PartialCaptureEvent | None = None  # the step's largest module graphed alone
    fix_trials: list[FixTrialEvent] = field(default_factory=list)  # written fixes tried on the user's calls (worker/fix_trials.py)

    @property
    def target_calls(self) -> int:
        if self.script_end is not None and self.script_end.calls is not None:
            return self.script_end.calls
        return len(self.calls)

    def with_sequences(self, sequences: list[list[str]]) -> Evidence:
        return dataclasses.replace(self, kernel_sequences=sequences)


# Events kept whole, last one wins: type -> Evidence field.
_SINGLE = {
    "probe": "probe",
    "capture": "capture",
    "anatomy": "anatomy",
    "race-check": "race_check",
    "memory": "memory",
    "calibration": "calibration",
    "plan-end": "plan_end",
    "script-end": "script_end",
    "worker-end": "worker_end",
    "outputs": "outputs",
    "target": "target",
    "call-site": "call_site",
    "kept-graph": "kept_graph",
    "partial-capture": "partial_capture",
}
# Events collected in order: type -> Evidence field.
_LISTS = {
    "call": "calls",
    "validation": "validations",
    "fallback": "fallbacks",
    "state-realloc": "state_reallocs",
    "kept-output": "kept_outputs",
    "loop-back": "loop_backs",
    "phase": "phases",
    "timing-end": "timing_ends",
    "timing-start": "timing_starts",
    **{kind: "buckets" for kind in ("bucket-plan", "bucket-measure", "bucket-check", "bucket-leak", "bucket-end")},
    "compile": "compiles",
    "fix-trial": "fix_trials",
    "profiler-plan": "profiler_plan",
    "op-sequence": "op_sequences",
}


def machine_of(data: dict[str, Any] | None) -> Machine:
    """The machine from a ``machine`` event or header; unknown keys are ignored."""
    m = dict(data or {})
    m.setdefault("python", platform.python_version())
    for key in ("gpu", "driver", "cuda", "torch"):
        m.setdefault(key, None)
    try:
        return TypeAdapter(Machine).validate_python(m)
    except ValidationError as exc:
        raise UsageError(f"malformed machine metadata: {exc.errors()[0]['msg']}") from None


def host_op_slopes(samples: dict[str, list[float]], counts: list[int]) -> list[float]:
    """µs per op of each (short, long) sample pair of the host-speed loop: the spread of the
    host's speed over the samples. Empty when the event does not hold them."""
    try:
        short, long = (int(c) for c in counts)
        pairs = zip(samples[str(short)], samples[str(long)])
        return [(float(b) - float(a)) / (long - short) for a, b in pairs]
    except (TypeError, ValueError, KeyError, ZeroDivisionError):
        return []


def _timing(data: dict[str, Any], e: TimingEvent | EagerTimingEvent | ReplayTimingEvent) -> None:
    if isinstance(e, TimingEvent):
        data["burst_wall_us"].setdefault(e.kind, []).extend(e.wall_us)
        if e.wall_us:
            data["burst_medians_us"].setdefault(e.kind, []).append(float(statistics.median(e.wall_us)))
        data["burst_gpu_us"].setdefault(e.kind, []).extend(g for g in e.gpu_us if g is not None)
    elif isinstance(e, EagerTimingEvent):
        data["eager_wall_us"].append(e.wall_us)
        if e.gpu_us is not None:
            data["eager_gpu_us"].append(e.gpu_us)
        if e.phase == "interleaved":
            data["interleaved_wall_us"].append(e.wall_us)
    else:
        data["replay_wall_us"].append(e.wall_us)
        if e.gpu_us is not None:
            data["replay_gpu_us"].append(e.gpu_us)


def parse_events(events: list[dict[str, Any]]) -> Evidence:
    """Validate the events (ValueError on a malformed known event) and gather them."""
    data: dict[str, Any] = {name: [] for name in _LISTS.values()}
    data.update({k: [] for k in ("eager_wall_us", "eager_gpu_us", "interleaved_wall_us", "replay_wall_us", "replay_gpu_us", "notes", "lost_traces")})
    data.update({k: {} for k in ("burst_wall_us", "burst_gpu_us", "burst_medians_us", "traces")})
    for e in validate_events(events):
        _record(data, e)
    return Evidence(**data)


def worker_note(e: NoteEvent) -> Note:
    """The worker's note as a record: its code and params, or the sentence a run recorded
    before the worker wrote codes (as free text)."""
    if e.code:
        return Note(e.code, dict(e.params or {}))
    return text_note(str(e.text))


def _record(data: dict[str, Any], e: Record) -> None:
    """One typed event into the Evidence being gathered."""
    kind = e.TYPE
    if kind in _SINGLE:
        data[_SINGLE[kind]] = e
    elif kind in _LISTS:
        data[_LISTS[kind]].append(e)
    elif isinstance(e, (TimingEvent, EagerTimingEvent, ReplayTimingEvent)):
        _timing(data, e)
    elif isinstance(e, HostSpeedEvent):
        data["host_eager_op_us"] = e.eager_op_us
        data["host_op_slopes"] = host_op_slopes(e.samples_us, e.counts)
    elif isinstance(e, TraceEvent):
        data["traces"][e.what] = e.path
        if e.may_be_lost:
            data["lost_traces"].append(e.what)
    elif isinstance(e, MutationsEvent):
        data["mutations"] = e
    elif isinstance(e, MachineEvent):
        data["machine"] = machine_of(e.machine) if e.machine else None
    elif isinstance(e, EnvironmentEvent):
        data["environment_problem"] = e.problem
    elif isinstance(e, TargetProblemEvent):
        data["target_problem"] = e.problem
    elif isinstance(e, InternalErrorEvent):
        data["internal_error"] = e.error
        data["notes"].append(note(NoteCode.INTERNAL_ERROR, error=e.error))
    elif isinstance(e, NoteEvent):
        data["notes"].append(worker_note(e))
    elif isinstance(e, CandidatesEvent):
        data["candidates"] = e.functions
