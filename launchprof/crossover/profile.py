"""The device profile: what ``launchprof crossover`` measured, as a versioned JSON file.

A profile is a property of the GPU, the driver and torch (the seeds: the crossover "is a
property of the driver and the device"), so it is cached per GPU/driver/torch where
``analyze`` finds it. It keeps its raw samples so that the fit can be redone offline
(:func:`launchprof.crossover.fit.refit`). A profile measured elsewhere still loads, with
a warning, because a neighbour's numbers beat no prediction at all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchprof.errors import UsageError
from launchprof.session import Machine

SCHEMA_VERSION = 1


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


@dataclass(frozen=True)
class Interval:
    """A figure and its 95% interval, in µs unless the name says otherwise."""

    median: float
    low: float
    high: float


@dataclass(frozen=True)
class Series:
    """Raw timings at one point of the sweep: enough to refit the profile offline."""

    kind: str
    count: int
    values_us: tuple[float, ...]
    kernel_us: float | None = None


@dataclass(frozen=True)
class LineFit:
    """time = fixed + per_node * count, fitted to the per-count medians."""

    fixed_us: Interval
    per_node_us: Interval
    points: int

    def at(self, count: float) -> float:
        return self.fixed_us.median + self.per_node_us.median * count


@dataclass(frozen=True)
class DurationFit:
    """Eager and replay lines for one spin-kernel duration in one timing mode."""

    mode: str  # "latency" (submit and wait) or "throughput" (back to back)
    kernel_us: float
    eager: LineFit | None
    graph: LineFit | None


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Amortisation:
    """Replays needed before capture + instantiate of ``nodes`` tiny kernels pays for itself."""

    nodes: int
    setup_us: float
    saved_per_replay_us: float | None
    replays: float | None


@dataclass(frozen=True)
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

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["samples"] = [
            {"kind": s.kind, "count": s.count, "kernel_us": s.kernel_us, "values_us": [round(v, 3) for v in s.values_us]}
            for s in self.samples
        ]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


@dataclass(frozen=True)
class LoadedProfile:
    """A profile read from disk, where from, and why it may not fit this machine."""

    profile: DeviceProfile
    path: Path
    warnings: tuple[str, ...] = ()


# --- JSON -> dataclasses -------------------------------------------------------------


def _interval(value: Any) -> Interval | None:
    if not isinstance(value, dict):
        return None
    return Interval(median=float(value["median"]), low=float(value["low"]), high=float(value["high"]))


def _line(value: Any) -> LineFit | None:
    if not isinstance(value, dict):
        return None
    fixed, slope = _interval(value.get("fixed_us")), _interval(value.get("per_node_us"))
    if fixed is None or slope is None:
        return None
    return LineFit(fixed_us=fixed, per_node_us=slope, points=int(value.get("points", 0)))


def _known(cls: type, value: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in value.items() if k in names}


_INTERVALS = [f.name for f in dataclasses.fields(DeviceProfile) if "Interval" in str(f.type)]


def profile_from_dict(data: dict[str, Any]) -> DeviceProfile:
    """Build a profile from parsed JSON; tolerant of added fields, strict on the version."""
    version = data.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        raise UsageError(
            f"device profile schema_version {version!r} is not supported (this launchprof reads "
            f"version {SCHEMA_VERSION}); run `launchprof crossover` again"
        )
    try:
        kwargs: dict[str, Any] = {k: v for k, v in _known(DeviceProfile, data).items() if k not in _INTERVALS}
        kwargs.update({name: _interval(data.get(name)) for name in _INTERVALS})
        kwargs["machine"] = Machine(**_known(Machine, data["machine"]))
        kwargs["crossover"] = [CrossoverPoint(**_known(CrossoverPoint, c)) for c in data.get("crossover") or []]
        kwargs["crossover_throughput"] = [
            CrossoverPoint(**_known(CrossoverPoint, c)) for c in data.get("crossover_throughput") or []
        ]
        kwargs["amortisation"] = [Amortisation(**_known(Amortisation, a)) for a in data.get("amortisation") or []]
        kwargs["fits"] = [
            DurationFit(mode=f["mode"], kernel_us=float(f["kernel_us"]), eager=_line(f.get("eager")), graph=_line(f.get("graph")))
            for f in data.get("fits") or []
        ]
        kwargs["samples"] = [
            Series(
                kind=str(s["kind"]),
                count=int(s["count"]),
                values_us=tuple(float(v) for v in s["values_us"]),
                kernel_us=None if s.get("kernel_us") is None else float(s["kernel_us"]),
            )
            for s in data.get("samples") or []
        ]
        kwargs.setdefault("notes", [])
        kwargs["notes"] = list(kwargs["notes"])
        kwargs.setdefault("partial", False)
        kwargs.setdefault("quick", False)
        kwargs.setdefault("gain_below_5pct_kernel_us", None)
        return DeviceProfile(**kwargs)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"not a launchprof device profile: {type(exc).__name__}: {exc}") from None


# --- files and the cache -------------------------------------------------------------


def cache_dir() -> Path:
    """Where profiles are cached: $LAUNCHPROF_CACHE_DIR/profiles, else the XDG cache.

    ``LAUNCHPROF_CACHE_DIR`` is launchprof's whole cache folder (CI can point it at a
    workspace); otherwise ``$XDG_CACHE_HOME/launchprof`` or ``~/.cache/launchprof``.
    """
    root = os.environ.get("LAUNCHPROF_CACHE_DIR")
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "launchprof"
    return base / "profiles"


def profile_slug(machine: Machine) -> str:
    """A file-name-safe key for one GPU/driver/torch, e.g. ``nvidia-h200_driver-580.95_torch-2.11.0-cu130``."""
    parts = [machine.gpu or "unknown-gpu", f"driver-{machine.driver or 'unknown'}", f"torch-{machine.torch or 'unknown'}"]
    return "_".join(re.sub(r"[^a-z0-9.]+", "-", p.lower()).strip("-") for p in parts)


def cache_path(machine: Machine) -> Path:
    return cache_dir() / f"{profile_slug(machine)}.json"


def save_to_cache(profile: DeviceProfile) -> Path:
    """Write the profile where ``find_cached_profile`` looks; raises OSError if it cannot."""
    from launchprof.outputs import write_atomic

    path = cache_path(profile.machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, profile.to_json())
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
    if not p.is_file():
        raise UsageError(f"device profile not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError) as exc:
        raise UsageError(f"cannot read device profile {p}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{p} is not valid JSON (truncated?): {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p} is not a launchprof device profile (top level is not an object)")
    profile = profile_from_dict(data)
    return LoadedProfile(profile=profile, path=p, warnings=mismatch_warnings(profile, machine))


def find_cached_profile(machine: Machine) -> LoadedProfile | None:
    """The cached profile for this GPU/driver/torch; else the best other cached one, with a warning.

    Preference after an exact match: same GPU, then newest. Unreadable files are skipped,
    never fatal: the cache is a convenience.
    """
    exact = cache_path(machine)
    if exact.is_file():
        try:
            return load_profile(exact, machine)
        except UsageError:
            pass
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
