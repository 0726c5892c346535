"""The report contract as validated models (DESIGN.md "Report contract").

Pydantic dataclasses, not plain ones, so that a report read back from JSON is checked
field by field (a hazard that is the string "ten", an unknown verdict or severity is a
usage error, exit 2, with one line) while renderers keep reading attributes
(``report.eager.step_us.median``) and tests keep ``dataclasses.replace``. They are frozen
because a report is a measured fact. Field names are a contract: add, never rename.

The JSON Schema of the report is :func:`report_json_schema`; ``docs/report.schema.json`` is
generated from it (a test fails when the committed copy is stale).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from launchprof.enums import Severity, Verdict

# Version 2 added raw samples, timing labels, clone/workspace memory, the structured
# prediction, hazard fingerprints and the run file's name (see launchprof.run.migrate).
SCHEMA_VERSION = 2

# Extra keys are ignored so that a report written by a newer launchprof with added
# fields still loads here (fields are added, never renamed).
_CONFIG = ConfigDict(extra="ignore")


def model(cls: type) -> Any:
    """A frozen, validated dataclass that ignores unknown keys."""
    return dataclass(frozen=True, config=_CONFIG)(cls)


@model
class Stats:
    median: float
    p10: float
    p90: float
    n: int


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
    load_avg: list[float] | None = None  # 1, 5 and 15 minute load average at start
    gpu_memory_bytes: int | None = None
    gpu_clocks_mhz: dict[str, float] | None = None  # {"sm": ..., "mem": ...} at start, read only
    gpu_other_processes: bool | int | list[Any] | None = None


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
    # Derived, never trusted from input: kind + relative file + the code at the line, so an
    # edit above the hazard (a new line number) keeps its identity.
    fingerprint: str = ""

    def __post_init__(self) -> None:
        # Imported here: launchprof.hazards' package imports this module.
        from launchprof.hazards.identity import hazard_fingerprint

        code = self.details.get("code") or self.message
        object.__setattr__(self, "fingerprint", hazard_fingerprint(self.kind, self.file, code))


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


@model
class Speedup:
    median: float
    low: float
    high: float
    method: str = "ratio of medians"  # how median and interval are computed


@model
class Prediction:
    """The speedup predicted from the eager trace and a device profile."""

    median: float
    low: float | None = None
    high: float | None = None
    basis: str | None = None  # which profile, which measured inputs
    replay_step_us: float | None = None
    explanation: str | None = None


@model
class Validation:
    calls_compared: int
    matches: int
    max_abs_diff: float | None


@model
class Bucket:
    """One recommended capture size for an argument whose shape varies."""

    argument: str
    dim: int
    sizes: list[int]
    padding_waste: float  # mean fraction of padded (wasted) work over the observed calls
    pool_bytes_estimate: int | None


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
    buckets: list[Bucket] | None
    run: RunInfo | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    mode: str = "analyze"  # "analyze" or "lint"
    timeline: Timeline | None = None
    prediction: Prediction | None = None
    project_root: str | None = None
    run_file: str | None = None
    candidates: list[Candidate] = dataclasses.field(default_factory=list)  # whole-script mode only

    def to_dict(self) -> dict[str, Any]:
        return REPORT_ADAPTER.dump_python(self, mode="json")

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Migrate an older report to this version, then validate it (UsageError on failure)."""
        from launchprof.run.migrate import migrate_report

        return validate_report(migrate_report(data))


REPORT_ADAPTER: TypeAdapter[Report] = TypeAdapter(Report)


def validate_report(data: dict[str, Any]) -> Report:
    """A report from plain data; a malformed one is a UsageError naming the first bad field."""
    from launchprof.errors import UsageError

    try:
        return REPORT_ADAPTER.validate_python(data)
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
    schema = REPORT_ADAPTER.json_schema(mode="serialization")
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


HEADER_ADAPTER: TypeAdapter[RunHeader] = TypeAdapter(RunHeader)
