"""The report contract as typed models (README "The report").

Frozen dataclasses: renderers read attributes (``report.eager.step_us.median``), tests use
``dataclasses.replace``, and a report is a measured fact. A report read back from JSON is
checked field by field by pydantic (:func:`validate_report`: a hazard that is the string
"ten", an unknown verdict or severity is a usage error, exit 2, with one line); one that
launchprof builds from its own values is not, so that writing a report never needs
pydantic (:mod:`launchprof.model_base`). Field names are a contract: add, never rename.

The JSON Schema of the report is :func:`report_json_schema`; ``docs/report.schema.json`` is
generated from it (a test fails when the committed copy is stale).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Annotated, Any

from launchprof.enums import Severity, Verdict
from launchprof.findings import Note, Param
from launchprof.hazards.identity import fingerprint_of
from launchprof.model_base import Before, adapter, model, plain  # unknown keys ignored: reports from a newer launchprof load
from launchprof.models_buckets import BucketPlan
from launchprof.ranks.models import RankSkew, RankSummary

if TYPE_CHECKING:
    from pydantic import ValidationError

# Version 2 added raw samples, timing labels, clone/workspace memory, the structured
# prediction, hazard fingerprints and the run file's name (see launchprof.run.migrate).
# Version 3: ``buckets`` is the measured bucket plan (launchprof.models_buckets), not a list.
SCHEMA_VERSION = 3


@model
class Stats:
    median: float
    p10: float
    p90: float
    n: int


def _one_minute_load(value: Any) -> Any:
    """The worker records the 1-minute load average (a number); a [1, 5, 15] list reads as its first."""
    if isinstance(value, (list, tuple)):
        return value[0] if value else None
    return value


@model
class Machine:
    """Where a run was measured. The one place for machine metadata (reports, profiles, runs)."""

    gpu: str | None
    driver: str | None
    cuda: str | None
    torch: str | None
    python: str
    cpu_model: str | None = None
    cpu_cores: int | None = None
    load_avg: Annotated[float | None, Before(_one_minute_load)] = None  # 1-minute load average at start
    gpu_memory_bytes: int | None = None
    gpu_clocks_mhz: dict[str, float] | None = None  # {"sm": ..., "mem": ...} at start, read only
    gpu_other_processes: bool | None = None  # other processes had a CUDA context on our GPU


@model
class Fix:
    """A fix written for one line: what is there, what to write instead, and why.

    ``after`` is empty when launchprof could not write the fix for this line; ``note`` then
    says so and gives the general rule. ``file``/``line`` name the line ``before`` is taken
    from when it is not the hazard's own (the line that rebinds a captured global).
    ``note`` is the sentence of ``code`` and ``params`` (a FixCode, worded by
    launchprof.render.fix_text); a fix read from a report without a code keeps its note."""

    before: str
    after: str
    note: str
    file: str | None = None
    line: int | None = None
    indent: str = ""  # the indentation of ``line`` in the file: ``after`` is written without it
    code: str = ""  # a FixCode's value: what the fix does, or why none was written
    params: dict[str, Param] = dataclasses.field(default_factory=dict)  # the names and lines its note says


@model
class Hazard:
    kind: str
    severity: Severity
    message: str
    file: str | None  # relative to the project root; absolute only outside it
    line: int | None
    hint: str
    source: str = "runtime"  # "runtime" (measured) or "static" (lint)
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    fix: Fix | None = None  # written for this hazard's line (launchprof.hazards.fixes)
    # kind + relative file + the code at the line, so an edit above the hazard (a new line
    # number) keeps its identity. Derived whenever the code is known; a fingerprint read from
    # a report whose hazard carries no code is kept, since it cannot be derived again here.
    fingerprint: str = ""
    # What was found as a record (launchprof.hazard_codes): ``message`` and ``hint`` are its
    # words (launchprof.render.hazard_text). A hazard without a code (from a report written
    # before hazards had codes, or built from a sentence alone) gets ``text`` and its
    # message as ``{"text": message}``.
    code: str = ""
    params: dict[str, Param] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        # The rules pass a kind's severity as they declare it; renderers compare by identity.
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "fingerprint", fingerprint_of(self))
        if not self.code:
            object.__setattr__(self, "code", "text")
            object.__setattr__(self, "params", {"text": self.message})


@model
class EagerProfile:
    step_us: Stats | None
    kernels_per_step: int | None
    gpu_busy_us: float | None
    gpu_idle_fraction: float | None
    launch_gap_us: Stats | None
    launch_api_us: float | None = None  # host time in cudaLaunchKernel & co per step
    gpu_span_us: Stats | None = None  # CUDA-event time from first to last kernel
    memcpys_per_step: int | None = None
    kernel_us: Stats | None = None  # duration of one kernel
    samples_us: list[float] = dataclasses.field(default_factory=list)  # every wall sample behind step_us
    timing: str | None = None  # "burst" (the user's step, back to back) or "in-loop"
    in_loop_step_us: Stats | None = None  # the calls the script made, timed in its loop


@model
class GraphNode:
    """One node of a captured graph, as drawn: its level is its depth from the roots."""

    id: int
    type: str
    name: str | None = None
    level: int = 0
    us: float | None = None  # its duration in the profiled replay, where it could be joined


@model
class Anatomy:
    """The captured graph's structure (launchprof.analysis.anatomy). ``nodes`` and
    ``edge_list`` are kept for small graphs only, which the HTML report draws in full."""

    nodes_by_type: dict[str, int]
    edges: int | None  # None: the edges could not be read
    roots: int | None
    leaves: int | None
    critical_path_nodes: int | None  # nodes on the longest dependency chain
    critical_path_us: float | None  # its measured time in the profiled replay
    max_width: int | None  # the widest level: nodes that could run at once
    total_us: float | None = None  # every joined node's time: the chain if nothing overlapped
    levels: list[int] = dataclasses.field(default_factory=list)  # nodes per level
    critical_path: list[int] = dataclasses.field(default_factory=list)  # node ids
    nodes: list[GraphNode] = dataclasses.field(default_factory=list)
    edge_list: list[list[int]] = dataclasses.field(default_factory=list)
    replay_streams: int | None = None  # streams the replay's kernels ran on
    overlap_us: float | None = None  # kernel time that ran alongside other kernels in replay


@model
class ReplayProfile:
    step_us: Stats | None  # copy-in of changed inputs + replay, no clone
    graph_nodes: int | None
    instantiate_us: float | None
    pool_bytes: int | None  # the graph's own increment of its pool
    capture_us: float | None = None
    node_types: dict[str, int] = dataclasses.field(default_factory=dict)
    gpu_span_us: Stats | None = None
    samples_us: list[float] = dataclasses.field(default_factory=list)
    timing: str | None = None
    in_loop_step_us: Stats | None = None
    clone_us: Stats | None = None  # cloning the outputs, timed alone
    workspace_bytes: int | None = None  # one-time library workspaces (cuBLAS), not per graph
    launchprof_bytes: int | None = None  # launchprof's static input buffers + one output clone
    setup_us: float | None = None  # capture + warm-up + instantiate: what payback must recover
    warmup_us: float | None = None
    anatomy: Anatomy | None = None  # nodes_by_type supersedes node_types (kept as the alias)


@model
class Speedup:
    median: float
    low: float
    high: float
    method: str = "ratio of medians"  # how median and interval are computed


@model
class Prediction:
    """The speedup predicted from the eager trace and a device profile.

    ``explanation`` and ``basis`` are sentences for readers; what they say is kept as records
    (PredictionCode notes, worded by launchprof.render.prediction_text): ``explanation_finding``
    (the replay estimate, its figures and why it gives this speedup) and ``basis_findings``
    (the profile and measured inputs, then each scaling applied to them), whose sentences,
    joined by "; ", are ``basis``. A prediction read from a report without them keeps its strings."""

    median: float
    low: float | None = None
    high: float | None = None
    basis: str | None = None  # which profile, which measured inputs
    replay_step_us: float | None = None
    explanation: str | None = None
    # This run's host speed over the device profile's (its eager-op loop): the profile's
    # launch costs were multiplied by it; None when not applied.
    host_scale: float | None = None
    # The launch costs the prediction used (µs, at this run's host speed): eager_op,
    # graph_launch, graph_node. The HTML panel draws these, whatever profile it is given.
    launch_costs_us: dict[str, float] | None = None
    explanation_finding: Note | None = None
    basis_findings: list[Note] = dataclasses.field(default_factory=list)


@model
class Validation:
    calls_compared: int
    matches: int
    max_abs_diff: float | None


@model
class KernelSpan:
    """One GPU activity in a timeline, relative to the start of its call."""

    name: str
    start_us: float
    dur_us: float
    kind: str = "kernel"  # kernel, memcpy, memset


@model
class Timeline:
    """One eager call and one replay of the same step, for the HTML timeline."""

    eager: list[KernelSpan]
    replay: list[KernelSpan]


@model
class RunInfo:
    """How the measurement run went: complete or not, and why it stopped."""

    complete: bool
    cause: str | None  # one line; None when the run completed
    script_exit: int | None
    target_calls: int
    wall_s: float | None
    phases_s: dict[str, float] = dataclasses.field(default_factory=dict)


@model
class KeptOutput:
    output: str  # the output's path in what the target returns ("" for a lone tensor, "[0]")
    name: str  # the name the call site gives it (`logits`)
    holder: str  # the user's variable, container or attribute that keeps it (`history`)
    holder_kind: str  # list, dict, deque, set, tuple, variable, attribute
    scope: str | None  # the module (`__main__`) or function (`main()`) the holder lives in
    bytes: int | None
    clone_us: float | None  # this output's share, by bytes, of replay.clone_us
    calls: int  # watched calls whose output it kept


@model
class LoopBack:
    argument: str  # the argument of call N+1 ...
    output: str  # ... that is this output of call N
    name: str
    how: str  # "same-object" or "equal-contents"
    bytes: int | None
    copy_us: float | None  # copying it into a static buffer, timed alone: the per-call saving


@model
class OutputsAdvice:
    """Which output clones the user's own graph code needs, and what they cost per call."""

    kept: list[KeptOutput]
    loop_back: list[LoopBack]
    clone_needed_us: float | None  # clones of the kept outputs only, per call
    clone_all_us: float | None  # replay.clone_us: cloning every output, as launchprof does
    basis: str  # how clone_needed_us is derived


@model
class Candidate:
    """Whole-script mode: a user function worth analysing as a target (most kernels per call)."""

    name: str  # as --target takes it: `step`, `Decoder.forward`
    file: str | None
    line: int | None  # the def line
    calls: int
    kernels_per_call: float
    command: str  # the command line that analyses it


@model
class Report:
    schema_version: int
    launchprof_version: str
    created: str
    machine: Machine
    script: str
    target: str | None
    verdict: Verdict
    eager: EagerProfile | None
    replay: ReplayProfile | None
    speedup: Speedup | None
    breakeven_replays: float | None
    predicted_speedup: float | None  # = prediction.median
    validation: Validation | None
    hazards: list[Hazard]
    buckets: BucketPlan | None
    run: RunInfo | None = None
    notes: list[str] = dataclasses.field(default_factory=list)  # the sentences of findings, for readers
    findings: list[Note] = dataclasses.field(default_factory=list)  # one per note, in order: its code and params
    mode: str = "analyze"  # "analyze" or "lint"
    timeline: Timeline | None = None
    prediction: Prediction | None = None
    project_root: str | None = None
    run_file: str | None = None
    outputs: OutputsAdvice | None = None  # kept outputs and looped-back state: what graph code must clone or feed back
    capture_snippet: str | None = None  # graphs-help only: capture code to paste (launchprof.snippet)
    candidates: list[Candidate] = dataclasses.field(default_factory=list)  # whole-script mode only
    ranks: list[RankSummary] | None = None  # multi-GPU (--nproc-per-node): one entry per rank; the rest is combined
    rank_skew: list[RankSkew] | None = None  # multi-GPU: step-time spread between ranks (stragglers)
    compile: CompileResult | None = None  # --compare compile: torch.compile(mode="reduce-overhead")
    compile_no_cudagraphs: CompileResult | None = None  # the same, mode="default" (fusion, no graphs)
    # The verdict rule's reading of ``speedup`` (launchprof.verdict.no_measurable_gain): its
    # interval includes 1.0, so "marginal" reads as no measurable gain. Derived from
    # ``speedup`` whenever a report is made, so a replaced speedup can never disagree with it.
    no_measurable_gain: bool | None = None

    def __post_init__(self) -> None:
        from launchprof.verdict import no_measurable_gain  # it builds on these models

        # A verdict may be given as its id; readers compare it with the enum's members.
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        object.__setattr__(self, "no_measurable_gain", no_measurable_gain(self.speedup))

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Validate a report of this schema version (UsageError on failure). Migrating an older
        one is its reader's step, above the models (launchprof.analysis.load.report_from_dict)."""
        version = data.get("schema_version") if isinstance(data, dict) else None
        if version != SCHEMA_VERSION:
            from launchprof.errors import UsageError

            newer = isinstance(version, int) and version > SCHEMA_VERSION
            raise UsageError(
                f"report schema_version {version!r} is newer than this launchprof reads ({SCHEMA_VERSION}): upgrade launchprof"
                if newer else f"report schema_version {version!r} is not {SCHEMA_VERSION}: migrate it first (launchprof.run.migrate)"
            )
        return validate_report(data)


def validate_report(data: dict[str, Any]) -> Report:
    """A report from plain data; a malformed one is a UsageError naming the first bad field."""
    from pydantic import ValidationError

    from launchprof.errors import UsageError

    try:
        return adapter(Report).validate_python(data)
    except ValidationError as exc:
        raise UsageError(f"not a valid launchprof report: {first_error(exc)}") from None


def first_error(exc: ValidationError) -> str:
    """One line for the first validation error: where, what was found, what was expected."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "top level"
    found = repr(err.get("input"))
    if len(found) > 40:
        found = found[:37] + "..."
    return f"{where}: {err['msg']} (found {found}; {exc.error_count()} problem(s) in all)"


def report_json_schema() -> dict[str, Any]:
    """The published JSON Schema of the report (docs/report.schema.json)."""
    schema = adapter(Report).json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "launchprof report"
    return schema


# --- the run file's header ---------------------------------------------------------------

RUN_FORMAT_VERSION = 1


@model
class WorkerOutcome:
    """How the worker process ended, as the CLI saw it."""

    returncode: int | None = None
    timed_out: bool = False
    interrupted: bool = False
    wall_s: float | None = None
    timeout: float | None = None


@model
class RunHeader:
    """The versioned header of a ``.lprun`` file: what was run, where, and how it ended.

    ``project_root`` is the absolute root on the machine that recorded the run; the loader
    maps absolute paths under it in the events to the relative names the sources are
    stored under, so a run re-renders the same on any machine."""

    format_version: int
    launchprof_version: str
    created: str
    script: str  # relative to the project root when inside it
    target: str | None = None
    argv: list[str] = dataclasses.field(default_factory=list)
    project_root: str | None = None
    machine: Machine | None = None
    worker: WorkerOutcome = dataclasses.field(default_factory=WorkerOutcome)
    repeat: int = 50
    sources: list[str] = dataclasses.field(default_factory=list)  # relative names under sources/
    traces: dict[str, str] = dataclasses.field(default_factory=dict)  # what -> member name


from launchprof.compile_report import CompileResult  # noqa: E402  (it builds on Stats above)
