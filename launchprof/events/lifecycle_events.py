"""Events that frame a run: who the worker is, what it measures, how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchprof.events.record import Event, Param, Site, omitted, written_when


@dataclass(frozen=True, kw_only=True)
class RankEvent(Event):
    """A worker started by torch's launcher (--nproc-per-node), first of its events."""

    TYPE = "rank"
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    pid: int | None = None
    pgid: int | None = None


@dataclass(frozen=True, kw_only=True)
class MachineEvent(Event):
    TYPE = "machine"
    # launchprof.model.core.Machine's fields; the CLI validates them into that record.
    machine: dict[str, Any] = field(default_factory=dict)
    import_s: float | None = None
    pid: int | None = None


@dataclass(frozen=True, kw_only=True)
class EnvironmentEvent(Event):
    """torch or CUDA unusable: the worker exits."""

    TYPE = "environment"
    problem: str | None = None


@dataclass(frozen=True, kw_only=True)
class CalibrationEvent(Event):
    TYPE = "calibration"
    status: str
    path: str | None = None
    seconds: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class CalibrationProgressEvent(Event):
    """Drives the progress bar while the quick profile is measured; the analysis skips it."""

    TYPE = "calibration-progress"
    what: str
    fraction: float


@dataclass(frozen=True, kw_only=True)
class TargetEvent(Event):
    TYPE = "target"
    name: str | None = None
    qualname: str | None = None
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class TargetProblemEvent(Event):
    TYPE = "target-problem"
    problem: str | None = None


@dataclass(frozen=True, kw_only=True)
class CallSiteEvent(Event, Site):
    """The line that first called the target."""

    TYPE = "call-site"


@dataclass(frozen=True, kw_only=True)
class ScriptException(Site):
    """What ended the script; empty when it ended normally."""

    type: str | None = omitted()
    message: str | None = omitted()
    traceback: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class ScriptEndEvent(Event):
    TYPE = "script-end"
    status: str | None = None  # ok, exception, exit, stopped (by launchprof: a state-lost note says why), done
    exit_code: int | None = None
    exception: ScriptException | None = None
    calls: int | None = None
    # done: the script's calls of its targets before the one where launchprof stopped it, once
    # the measurement was complete (worker/early_stop.py)
    stopped_after_calls: int | None = omitted()


@dataclass(frozen=True, kw_only=True)
class WorkerEndEvent(Event):
    TYPE = "worker-end"
    wall_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class PhaseEvent(Event):
    TYPE = "phase"
    name: str | None = None
    call: int | None = None


@dataclass(frozen=True, kw_only=True)
class PlanEndEvent(Event):
    TYPE = "plan-end"
    reason: str = ""
    phase: str | None = None
    calls: int | None = None
    replays_timed: int | None = None
    validations: int | None = None
    fallbacks: int | None = None


@dataclass(frozen=True, kw_only=True)
class ProfilerPlanEvent(Event):
    """Whether torch.profiler runs on the target's calls, and why: a run without eager traces
    says so here. ``reason`` is kernels, save-trace, no-cuda-bindings, ranks, compare-compile,
    overview, capture-failed, no-graph, ops-differ or no-graph-nodes (launchprof/worker/profiler_choice.py),
    None when not profiled; ``when`` is start (the target's first call) or after-plan (the
    recorded eager calls profiled once the plan closed)."""

    TYPE = "profiler-plan"
    profiled: bool
    reason: str | None = None
    when: str = "start"


@dataclass(frozen=True, kw_only=True)
class NoteEvent(Event):
    """A note for the report: ``code`` (a ``launchprof.model.findings.NoteCode`` value) and its
    ``params``, worded by ``launchprof.render.words.notes_text``. ``text`` is the sentence runs
    recorded before notes had codes carry instead; the CLI reads it where ``code`` is absent."""

    TYPE = "note"
    code: str | None = omitted()
    params: dict[str, Param] = written_when(lambda note: note.code is not None, default_factory=dict)
    text: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class InternalErrorEvent(Event):
    TYPE = "internal-error"
    error: str | None = None
    traceback: str | None = None


@dataclass(frozen=True, kw_only=True)
class CandidateRow:
    """A user function ranked by kernels per call in whole-script mode."""

    name: str | None = None
    file: str | None = None
    line: int | None = None
    calls: int | None = None
    kernels_per_call: float | None = None
    command: str | None = None


@dataclass(frozen=True, kw_only=True)
class CandidatesEvent(Event):
    TYPE = "candidates"
    functions: list[CandidateRow] = field(default_factory=list)
