"""The report contract as typed models (README "The report"): the core fields here, each
section (timing, prediction, hazards, kept outputs, buckets, compile, ranks) in its own
module of this package.

Frozen dataclasses: renderers read attributes (``report.eager.step_us.median``), tests use
``dataclasses.replace``, and a report is a measured fact. A report read back from JSON is
checked field by field by pydantic (:func:`validate_report`: a hazard that is the string
"ten", an unknown verdict or severity is a usage error, exit 2, with one line); one that
launchprof builds from its own values is not, so that writing a report never needs
pydantic (:mod:`launchprof.model.records`). Field names are a contract: add, never rename.

The JSON Schema of the report is :func:`report_json_schema`; ``docs/report.schema.json`` is
generated from it (a test fails when the committed copy is stale).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Annotated, Any

from launchprof.model.compiled import CompileResult
from launchprof.enums import Verdict
from launchprof.model.findings import Note
from launchprof.model.hazard_records import Hazard
from launchprof.model.kept_outputs import OutputsAdvice
from launchprof.model.predicted import Prediction
from launchprof.model.step_timing import EagerProfile, ReplayProfile, Speedup, Timeline, Validation
from launchprof.model.records import Before, adapter, model, plain
from launchprof.model.bucket_plan import BucketPlan
from launchprof.model.rank_records import RankSkew, RankSummary
from launchprof.model.training_records import AssumedFix, PartialCapture

if TYPE_CHECKING:
    from pydantic import ValidationError


# Version 2 added raw samples, timing labels, clone/workspace memory, the structured
# prediction, hazard fingerprints and the run file's name (see launchprof.run.migrate).
# Version 3: ``buckets`` is the measured bucket plan (launchprof.model.bucket_plan), not a list.
SCHEMA_VERSION = 3


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
class RunInfo:
    """How the measurement run went: complete or not, and why it stopped."""

    complete: bool
    cause: str | None  # one line; None when the run completed
    script_exit: int | None
    target_calls: int
    wall_s: float | None
    phases_s: dict[str, float] = dataclasses.field(default_factory=dict)
    # The script was stopped once the measurement was complete, after this many calls of the
    # target (None: it ended by itself, or --run-to-end let it)
    stopped_after_calls: int | None = None
    # Stopped by the user (Ctrl-C, SIGTERM): not a failure of the script, and the checks
    # that come after the stop never ran
    interrupted: bool = False


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
    capture_snippet: str | None = None  # graphs-help only: capture code to paste (launchprof.analysis.snippet)
    candidates: list[Candidate] = dataclasses.field(default_factory=list)  # whole-script mode only
    ranks: list[RankSummary] | None = None  # multi-GPU (--nproc-per-node): one entry per rank; the rest is combined
    rank_skew: list[RankSkew] | None = None  # multi-GPU: step-time spread between ranks (stragglers)
    compile: CompileResult | None = None  # --compare compile: torch.compile(mode="reduce-overhead")
    compile_no_cudagraphs: CompileResult | None = None  # the same, mode="default" (fusion, no graphs)
    # The verdict rule's reading of ``speedup`` (launchprof.model.step_timing.no_measurable_gain): its
    # interval includes 1.0, so "marginal" reads as no measurable gain. Derived from
    # ``speedup`` whenever a report is made, so a replaced speedup can never disagree with it.
    no_measurable_gain: bool | None = None
    # What launchprof changed in the process so that the step captured (a kept autograd graph
    # detached), and the fields measured after it: their figures read "once fixed".
    assumes_fix: list[AssumedFix] = dataclasses.field(default_factory=list)
    partial_capture: PartialCapture | None = None  # the step's largest module graphed alone, when the whole step was not
    # Eager over copy-in + replay + the output clones that kept-output findings say the user's
    # code needs (launchprof.analysis.as_used); None when no clone is needed. ``speedup`` keeps
    # its definition; the verdict and the headline read this figure when there is one.
    speedup_as_used: Speedup | None = None
    # Replays to win set-up back when each also pays those clones (``breakeven_replays`` with the
    # clones added to the replay step); None when no clone is needed or it never pays back.
    breakeven_replays_as_used: float | None = None

    def __post_init__(self) -> None:
        from launchprof.model.step_timing import no_measurable_gain

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
