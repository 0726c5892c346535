"""The timing section: the eager and replay step profiles, the graph's anatomy, the speedup
and the replay-against-eager validation.
"""

from __future__ import annotations

import dataclasses

from launchprof.model.records import model


@model
class Stats:
    median: float
    p10: float
    p90: float
    n: int


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
    # The mean idle gap between the step's activities, from CUDA events rather than a trace
    # (basis "events"): a mean, so launch_gap_us, a distribution, stays null beside it.
    launch_gap_mean_us: float | None = None
    # How a figure was obtained, by field name: "graph-nodes" (counted from the captured graph),
    # "events" (from the bursts' CUDA events); a field not named, or an empty map, was profiled.
    basis: dict[str, str] = dataclasses.field(default_factory=dict)


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
class HostVariation:
    """How far the speedup moves if another process runs on a faster or slower host
    (launchprof.analysis.host_range): the part of the interval a rerun adds."""

    factor: float  # the host's speed taken to differ up to this factor either way between processes
    basis: str  # what set the factor: "default" (docs/measurements.md) or the measurement that exceeded it
    eager_host_us: float  # the eager step's time where the host sets the pace (scales with its speed)
    eager_gpu_us: float  # the eager step's GPU busy time (at the bursts' clocks): its floor
    replay_host_us: float | None  # the replay's host part (graph launch, copies in), at most; None: unknown (no profile, no host loop), taken as 0
    low_factor: float  # the speedup's multiplier over that range of host speeds, lowest
    high_factor: float  # and highest
    replay_host_low_us: float | None = None  # and at least (half the graph launch): the end that widens the interval
    run_vs_profile: float | None = None  # this run's eager-op loop over the profile's (another process)
    profile_rounds: float | None = None  # the profile's eager-op spread across its rounds, 1 + (max - min) / median
    run_samples: float | None = None  # the fastest over the slowest of this run's eager-op samples


@model
class Speedup:
    median: float
    low: float
    high: float
    method: str = "ratio of medians"  # how median and interval are computed
    within_low: float | None = None  # the 95% interval of this process's samples alone (a rerun is not in it)
    within_high: float | None = None
    between_process: HostVariation | None = None  # what widened low/high beyond within_low/within_high


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


def no_measurable_gain(speedup: Speedup | None) -> bool | None:
    """The speedup's 95% interval includes 1.0: replay may be no faster than eager, so a
    marginal verdict is no measurable gain. None when no speedup was measured."""
    if speedup is None:
        return None
    return speedup.low <= 1.0 <= speedup.high


# How an eager figure was obtained (EagerProfile.basis): traced by the profiler, counted from
# the captured graph's nodes, or read from the CUDA events around the timed calls.
PROFILED, GRAPH_NODES, EVENTS = "profiled", "graph-nodes", "events"


def basis_of(eager: object, field: str) -> str:
    """How ``eager``'s ``field`` was obtained; a report without the map (older ones) profiled it."""
    return (getattr(eager, "basis", None) or {}).get(field, PROFILED)


def derived(eager: object) -> bool:
    """Whether the eager step's kernels were counted from the graph rather than traced."""
    return basis_of(eager, "kernels_per_step") != PROFILED
