"""The eager figures of a captured step recorded without a profiler session.

Profiling the eager step (CUPTI) costs seconds and slows every launch it watches, and a
step that captures needs none of it for its verdict: the graph says how many kernels and
copies the step launches, and the CUDA events around the timed replays say how long the
GPU works on them. So the worker profiles only where it must, and for a captured step
without an eager trace the analysis derives the figures here. Each derived figure names
its basis in ``EagerProfile.basis``, so that a reader, and ``compare``, never take a count
of graph nodes for a count of traced kernels:

- ``graph-nodes``: kernels per step are the graph's kernel nodes (a replay's kernels: torch's
  caches may spare eager a few, hf_gpt2_step 89 traced against 108 nodes); copies are its
  memcpy and memset nodes, as the trace counts them.
- ``events``: GPU busy is the replay's GPU span less what the host spends before the GPU
  starts (the graph launch, the copies of new inputs and the RNG prologue's fills), which
  the span holds; GPU idle compares that with the eager step's span, and the mean launch gap
  spreads the difference over the gaps between the step's kernels and copies.

Per-kernel durations, launch-call time, the timeline and node times need the profiler's
timestamps: they stay null.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from launchprof.analysis.host_range import replay_host_parts
from launchprof.crossover.profile import DeviceProfile
from launchprof.model.step_timing import EVENTS, GRAPH_NODES, EagerProfile, ReplayProfile
from launchprof.run.evidence import Evidence

if TYPE_CHECKING:  # pandas loads with the trace tables: only where a trace is read
    from launchprof.common.trace_tables import CallProfile

COPY_NODES = ("memcpy", "memset")  # what the trace counts as copies (memcpy and memset rows)


def derivable(calls: list[CallProfile], replay: ReplayProfile | None) -> bool:
    """No profiled eager call to read, and a captured graph whose node types are known (or
    that is empty: a step with no CUDA work captures no node)."""
    return not calls and replay is not None and (bool(replay.node_types) or replay.graph_nodes == 0)


def host_before_replay_us(ev: Evidence, profile: DeviceProfile | None) -> float | None:
    """What the host spends in a timed replay before the graph's work can start, at this
    run's host speed: the graph launch plus one eager op per input copied in and per RNG
    fill. From the device profile; without one, this run's eager-op loop
    (``replay_host_parts``); None without either."""
    parts = replay_host_parts(ev, profile)
    if parts is None:
        return None
    launch, op, extra = parts
    return launch + extra * max(op, 0.0)


def from_graph(eager: EagerProfile, replay: ReplayProfile, host_us: float | None) -> EagerProfile:
    """``eager`` with the figures its trace would have given, derived from the graph and the
    bursts' CUDA events (the module's docstring); ``host_us`` from :func:`host_before_replay_us`."""
    types = replay.node_types
    kernels = int(types.get("kernel", 0))
    copies = sum(int(types.get(t, 0)) for t in COPY_NODES)
    replay_span = replay.gpu_span_us.median if replay.gpu_span_us else None
    eager_span = eager.gpu_span_us.median if eager.gpu_span_us else None
    busy = idle = gap = None
    if replay_span is not None:
        busy = max(replay_span - (host_us or 0.0), 0.0)
    # A replay span beyond the eager one holds work the eager step does not (copies of new
    # inputs, dict_inputs 92.9 against 81.1 µs): no idle share can be read from it.
    if busy is not None and eager_span and eager_span > 0 and replay_span is not None and replay_span <= eager_span:
        idle = 1.0 - busy / eager_span
        activities = kernels + copies
        gap = (eager_span - busy) / (activities - 1) if activities > 1 else None
    return dataclasses.replace(
        eager,
        kernels_per_step=kernels,
        memcpys_per_step=copies,
        gpu_busy_us=busy,
        gpu_idle_fraction=idle,
        launch_gap_us=None,
        launch_gap_mean_us=gap,
        launch_api_us=None,
        kernel_us=None,
        basis={
            "kernels_per_step": GRAPH_NODES, "memcpys_per_step": GRAPH_NODES,
            "gpu_busy_us": EVENTS, "gpu_idle_fraction": EVENTS, "launch_gap_mean_us": EVENTS,
        },
    )
