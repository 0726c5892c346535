"""The device profile: what ``launchprof crossover`` measured, as a versioned JSON file.

A profile is a property of the GPU, the driver and torch (the seeds: the crossover "is a
property of the driver and the device"), so it is cached per GPU/driver/torch where
``analyze`` finds it. It keeps its raw samples so that the fit can be redone offline
(:func:`launchprof.crossover.fit.refit`). A profile measured elsewhere still loads, with
a warning, because a neighbour's numbers beat no prediction at all.

The classes are pydantic dataclasses: validated when built or loaded (a malformed file is
one usage error, exit 2, never a traceback deep in the prediction), positional and
``dataclasses.replace`` still work, and :func:`profile_json_schema` publishes the schema.
Older files are brought up to date by :func:`migrate` before validation.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from launchprof.crossover.cache_files import SCHEMA_VERSION, cache_dir, cache_path, profile_slug, version_supported  # noqa: F401 - callers read them here
from launchprof.crossover.determined import undetermined_coefficients
from launchprof.errors import UsageError
from launchprof.fileio.input_files import PROFILE, RUN_FILE, WANTED_PROFILE, check_input_file, is_run_zip, other_kind, refuse_other_kind
from launchprof.fileio.jsonfile import read_json_object
from launchprof.model.core import Machine

_CONFIG = ConfigDict(extra="ignore")  # newer files add fields: an older reader ignores them


class Kind:
    """Sample kinds (``Series.kind``). ``count`` is a node or launch count, except for calibration (cycles)."""

    CALIBRATION = "calibration"  # device µs of one _sleep(cycles) kernel (CUDA events)
    EAGER_OP = "eager_op"  # host µs for `count` x.add_(1.0) back to back, then sync
    RAW_LAUNCH = "raw_launch"  # prefix: raw_launch:<method>, same shape as EAGER_OP
    EAGER_LATENCY = "eager_latency"  # host µs: `count` spin kernels launched, then sync
    GRAPH_LATENCY = "graph_latency"  # host µs: one replay of a `count`-node graph, then sync
    EAGER_THROUGHPUT = "eager_throughput"  # host µs per call, many calls back to back
    GRAPH_THROUGHPUT = "graph_throughput"  # host µs per replay, many replays back to back
    FLOOR = "floor"  # prefix: floor:<kernel>; device µs of one replay of empty kernels (events)
    CAPTURE = "capture"  # host µs to record `count` launches and end the capture
    INSTANTIATE = "instantiate"  # host µs of CUDAGraph.instantiate()
    CAPTURE_INSTANTIATE = "capture_instantiate"  # fallback when keep_graph is unavailable
    FIRST_LAUNCH = "first_launch_extra"  # first replay's latency minus a steady replay's
    REINSTANTIATE = "reinstantiate"  # host µs of cudaGraphInstantiate on the raw graph
    UPDATE = "update"  # host µs of cudaGraphExecUpdate with a same-topology graph
    TRACED = "traced"  # prefix: traced:<kernel>; torch.profiler (CUPTI) durations of single kernels, count 1


@dataclass(frozen=True, config=_CONFIG)
class Interval:
    """A figure and its 95% interval, in µs unless the name says otherwise."""

    median: float
    low: float
    high: float


@dataclass(frozen=True, config=_CONFIG)
class Series:
    """Raw timings at one point of the sweep: enough to refit the profile offline."""

    kind: str
    count: int
    values_us: tuple[float, ...]
    kernel_us: float | None = None
    round: int | None = None  # host coefficients are measured in interleaved rounds; None: not part of one


@dataclass(frozen=True, config=_CONFIG)
class LineFit:
    """time = fixed + per_node * count, fitted to the per-count medians."""

    fixed_us: Interval
    per_node_us: Interval
    points: int

    def at(self, count: float) -> float:
        return self.fixed_us.median + self.per_node_us.median * count


@dataclass(frozen=True, config=_CONFIG)
class DurationFit:
    """Eager and replay lines for one spin-kernel duration in one timing mode."""

    mode: str  # "latency" (submit and wait) or "throughput" (back to back)
    kernel_us: float
    eager: LineFit | None
    graph: LineFit | None


@dataclass(frozen=True, config=_CONFIG)
class CrossoverPoint:
    """Where replay starts to beat eager for kernels of one duration.

    ``nodes_crossover``/``gain_at_64_nodes`` compare with the spin kernels launched
    eagerly (the cheapest launch path); the ``_torch_op`` pair models eager launches
    that cost what a torch op costs (``eager_op_us``), as real workloads do.
    Gain is eager time / replay time - 1.
    """

    kernel_us: float
    nodes_crossover: int | None
    gain_at_64_nodes: float | None
    nodes_crossover_torch_op: int | None = None
    gain_at_64_nodes_torch_op: float | None = None


@dataclass(frozen=True, config=_CONFIG)
class Amortisation:
    """Replays needed before capture + instantiate of ``nodes`` tiny kernels pays for itself."""

    nodes: int
    setup_us: float
    saved_per_replay_us: float | None
    replays: float | None
    setup_low_us: float | None = None  # 95% interval of setup_us (instantiate's intercept is often undetermined)
    setup_high_us: float | None = None
    replays_low: float | None = None  # replays for setup_low_us and setup_high_us
    replays_high: float | None = None


@dataclass(frozen=True, config=_CONFIG)
class DeviceProfile:
    schema_version: int
    launchprof_version: str
    created: str
    machine: Machine
    partial: bool
    quick: bool
    eager_op_us: Interval | None
    raw_launch_us: Interval | None
    graph_launch_fixed_us: Interval | None
    graph_node_us: Interval | None
    floor_node_us: Interval | None
    instantiate_node_us: Interval | None
    update_node_us: Interval | None
    crossover: list[CrossoverPoint]
    gain_below_5pct_kernel_us: float | None
    samples: list[Series]
    notes: list[str]
    raw_launch_method: str | None = None
    floor_kernel: str | None = None
    capture_node_us: Interval | None = None
    instantiate_fixed_us: Interval | None = None
    reinstantiate_node_us: Interval | None = None
    first_launch_node_us: Interval | None = None
    graph_gap_us: Interval | None = None
    eager_gap_us: Interval | None = None
    kernel_scale: Interval | None = None
    empty_kernel_us: Interval | None = None  # traced (CUPTI) duration of an empty kernel
    cycles_per_us: float | None = None
    crossover_throughput: list[CrossoverPoint] = field(default_factory=list)
    amortisation: list[Amortisation] = field(default_factory=list)
    fits: list[DurationFit] = field(default_factory=list)
    model: str = ""
    spread: dict[str, float] = field(default_factory=dict)  # coefficient -> (max - min) / median across rounds
    noisy: bool = False  # a host coefficient moved more than NOISY_SPREAD between rounds
    noisy_reason: str | None = None
    plan: str | None = None  # the sweep plan's name: "quick", "default" or "calibration" (inside analyze)
    rechecked: bool = False  # a noisy calibration measured a second time (crossover/calibrate.py)
    undetermined: list[str] = field(default_factory=list)  # coefficients whose 95% interval spans over 2x their median (determined.py)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["samples"] = [_series_dict(s) for s in self.samples]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def _series_dict(s: Series) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": s.kind, "count": s.count, "kernel_us": s.kernel_us}
    if s.round is not None:
        out["round"] = s.round
    out["values_us"] = [round(v, 3) for v in s.values_us]
    return out


Unloadable = Callable[[Path, UsageError], None]  # a cached profile that does not load, and why


@dataclasses.dataclass(frozen=True)
class LoadedProfile:
    """A profile read from disk, where from, and why it may not fit this machine."""

    profile: DeviceProfile
    path: Path
    warnings: tuple[str, ...] = ()


# --- JSON -> model ------------------------------------------------------------------

_ADAPTER: TypeAdapter[DeviceProfile] = TypeAdapter(DeviceProfile)


def profile_json_schema() -> dict[str, Any]:
    """The JSON Schema of a device profile file (the published contract)."""
    return _ADAPTER.json_schema()


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older profile's JSON up to :data:`SCHEMA_VERSION`; refuse what no step handles.

    Version 1 had no rounds, so its spread is unknown, not zero: it is marked as such in the
    notes and never flagged noisy on evidence it does not have.
    """
    version = data.get("schema_version")
    if version is None:
        raise UsageError("not a launchprof device profile: it has no schema_version")
    if not version_supported(version):
        raise UsageError(
            f"device profile schema_version {version!r} is not supported (this launchprof reads "
            f"versions 1 to {SCHEMA_VERSION}); run `launchprof crossover` again"
        )
    data = dict(data)
    if version == 1:
        notes = data.get("notes")
        data["notes"] = [*(notes if isinstance(notes, list) else []), "profile version 1: host coefficients were measured in one round, their spread is unknown"]
        data.setdefault("spread", {})
        data.setdefault("noisy", False)
        data["schema_version"] = 2
    return data


def profile_from_dict(data: dict[str, Any]) -> DeviceProfile:
    """Build a profile from parsed JSON: migrated, then validated; tolerant of added fields."""
    if not isinstance(data, dict):  # a list or a number where the profile belongs (a damaged run's profile.json)
        raise UsageError("not a launchprof device profile (top level is not an object)")
    data = migrate(data)
    try:
        profile = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise UsageError(f"not a launchprof device profile: {where}: {first['msg']}{more}") from None
    if "undetermined" not in data:  # written before the flag existed: judge its intervals now
        profile = dataclasses.replace(profile, undetermined=undetermined_coefficients(profile))
    return profile


# --- files and the cache -------------------------------------------------------------


def save_to_cache(profile: DeviceProfile) -> Path:
    """Write the profile where ``find_cached_profile`` looks; raises OSError if it cannot."""
    from launchprof.fileio.output_files import write_output

    path = cache_path(profile.machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, profile.to_json())
    return path


def mismatch_warnings(profile: DeviceProfile, machine: Machine | None) -> tuple[str, ...]:
    """Why a profile may not describe ``machine`` (empty when it does)."""
    warnings: list[str] = []
    if profile.partial:
        warnings.append("the device profile is partial (its sweep was interrupted): predictions are rougher")
    if machine is None:
        return tuple(warnings)
    pm = profile.machine
    diffs = [
        f"{label} {theirs or '?'} (this machine: {ours or '?'})"
        for label, theirs, ours in (("GPU", pm.gpu, machine.gpu), ("driver", pm.driver, machine.driver), ("torch", pm.torch, machine.torch))
        if theirs != ours
    ]
    if diffs:
        warnings.append(
            "the device profile was measured with " + ", ".join(diffs)
            + ": predictions may be off; run `launchprof crossover` on this machine"
        )
    return tuple(warnings)


def load_profile(path: str | Path, machine: Machine | None = None) -> LoadedProfile:
    """Read a profile file. A missing or foreign file is a usage error; a mismatch is a warning."""
    p = Path(path)
    check_input_file(p, WANTED_PROFILE, f"device profile not found: {p}")
    if is_run_zip(p):
        raise other_kind(p, RUN_FILE, PROFILE, WANTED_PROFILE)
    data = read_json_object(p, "a launchprof device profile")
    refuse_other_kind(p, data, PROFILE, WANTED_PROFILE)
    try:
        profile = profile_from_dict(data)
    except UsageError as exc:  # name the file, as a report's errors do
        raise UsageError(f"{p}: {exc}") from None
    return LoadedProfile(profile=profile, path=p, warnings=mismatch_warnings(profile, machine))


def find_cached_profile(machine: Machine, unloadable: Unloadable | None = None) -> LoadedProfile | None:
    """The cached profile for this GPU/driver/torch; else the best other cached one, with a warning.

    Preference after an exact match: same GPU, then newest. Unreadable files are skipped,
    never fatal: the cache is a convenience. The exact file that does not load goes to
    ``unloadable`` with its error: analyze's worker, which looks at the file without
    validating it, took it for this machine's profile and would not measure again.
    """
    exact = cache_path(machine)
    if exact.is_file():
        try:
            return load_profile(exact, machine)
        except UsageError as exc:
            if unloadable is not None:
                unloadable(exact, exc)
    folder = cache_dir()
    if not folder.is_dir():
        return None
    candidates: list[LoadedProfile] = []
    for path in sorted(folder.glob("*.json")):
        if path == exact:
            continue
        try:
            candidates.append(load_profile(path, machine))
        except UsageError:
            continue
    if not candidates:
        return None
    candidates.sort(key=lambda c: (c.profile.machine.gpu == machine.gpu, c.profile.created), reverse=True)
    return candidates[0]
