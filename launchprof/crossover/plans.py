"""What a sweep measures: the plans (quick, default, calibration) and their rough cost.

Plans are data, so a plan's budget can be checked on CPU (:func:`estimate_seconds`) and the
calibration that ``analyze`` runs before a user's script can be kept under its 10 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SweepPlan:
    """What one sweep measures. The per-call cap keeps long kernels from eating the budget.

    The host-side coefficients (eager op, bare launch, graph launch, instantiate, update) are
    measured in ``host_rounds`` interleaved rounds, each with ``launch_reps``/``setup_reps``
    repeats: host timings drift by tens of percent within a minute on shared machines, and
    a coefficient measured in one block takes whatever the host did in that block.
    """

    name: str
    kernel_us: tuple[float, ...]  # spin durations; 0 is the shortest possible kernel
    node_counts: tuple[int, ...]
    max_call_us: float  # skip (duration, count) cells whose GPU time per call exceeds this...
    always_nodes: int  # ...except counts up to this one, which every duration measures
    latency_reps: int
    throughput_samples: int
    throughput_min_us: float  # each throughput sample runs at least this long
    launch_counts: tuple[int, ...]
    launch_reps: int  # per round
    floor_counts: tuple[int, ...]
    floor_reps: int
    setup_counts: tuple[int, ...]
    setup_reps: int  # per round
    calibration_cycles: tuple[int, ...] = (0, 100_000, 400_000, 1_600_000)
    calibration_reps: int = 5
    trace_launches: int = 200  # 0: no kernel trace (CUPTI: seconds to start, and it leaves callbacks behind)
    host_rounds: int = 3
    use_cupy: bool = True  # an empty cupy kernel for the floor and the bare launch
    measure_update: bool = True  # cudaGraphExecUpdate through cuda.bindings

    def cells(self) -> list[tuple[float, int]]:
        """(kernel µs, nodes) pairs to measure, longest calls last within each duration."""
        return [
            (k, n)
            for k in self.kernel_us
            for n in self.node_counts
            if n <= self.always_nodes or n * (k + 1.0) <= self.max_call_us
        ]

    def host_cells(self) -> list[tuple[float, int]]:
        """The cells of the shortest kernels: measured in every host round (graph launch cost)."""
        shortest = min(self.kernel_us)
        return [(k, n) for k, n in self.cells() if k == shortest]

    def device_cells(self) -> list[tuple[float, int]]:
        """The other cells: GPU-paced, measured once in the graph sweep."""
        shortest = min(self.kernel_us)
        return [(k, n) for k, n in self.cells() if k != shortest]


QUICK_PLAN = SweepPlan(
    name="quick",
    kernel_us=(0.0, 5.0, 20.0, 100.0),
    node_counts=(1, 4, 16, 64, 256, 1024),
    max_call_us=7_000.0,
    always_nodes=64,
    latency_reps=7,
    throughput_samples=3,
    throughput_min_us=1_000.0,
    launch_counts=(64, 256, 1024),
    launch_reps=3,
    floor_counts=(1, 16, 64, 256, 1024),
    floor_reps=5,
    setup_counts=(16, 128, 1024),
    setup_reps=1,
    trace_launches=0,  # a process's first CUPTI session costs seconds (about 4 on the H200), as much as this sweep's measurements
    host_rounds=3,
)

DEFAULT_PLAN = SweepPlan(
    name="default",
    kernel_us=(0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0),
    node_counts=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048),
    max_call_us=15_000.0,
    always_nodes=64,
    latency_reps=11,
    # Each throughput sample already averages >= 3 calls, and the shortest kernels' cells pool
    # host_rounds of them: 3 samples rather than 5 take the estimate from 19.4 s to 15.8 s.
    throughput_samples=3,
    throughput_min_us=2_000.0,
    launch_counts=(64, 128, 256, 512, 1024, 2048),
    launch_reps=3,
    floor_counts=(1, 4, 16, 64, 256, 1024, 2048),
    floor_reps=7,
    setup_counts=(8, 32, 128, 512, 2048),
    setup_reps=2,
    host_rounds=5,
)

# What ``analyze`` measures on a machine with no cached profile, before the user's script:
# only what the prediction reads (eager op, graph launch fixed + per node, floor, the gap of
# one longer kernel, capture/instantiate per node). No cupy (it would stay imported in the
# user's process), no torch.profiler pass (CUPTI callbacks would slow the user's launches),
# no cudaGraphExecUpdate (the prediction does not use it).
CALIBRATION_PLAN = SweepPlan(
    name="calibration",
    kernel_us=(0.0, 20.0),
    node_counts=(1, 4, 16, 64, 256),
    max_call_us=6_000.0,
    always_nodes=64,
    latency_reps=5,
    throughput_samples=2,
    throughput_min_us=500.0,
    launch_counts=(64, 256, 1024),
    launch_reps=3,
    floor_counts=(1, 16, 64, 256),
    floor_reps=3,
    setup_counts=(16, 128, 512),
    setup_reps=1,
    calibration_cycles=(0, 100_000, 400_000),
    calibration_reps=3,
    trace_launches=0,
    host_rounds=5,  # graph_launch_fixed_us, an intercept, spread 36-52% across 3 rounds; the median of 5 holds better
    use_cupy=False,
    measure_update=False,
)


def estimate_seconds(plan: SweepPlan, launch_us: float = 7.0, node_us: float = 1.0, fixed_us: float = 15.0) -> float:
    """Rough wall time of a plan's sweep (no start-up), for keeping plans inside their budgets."""
    total = 0.0
    rounds = plan.host_rounds
    for k, n in plan.cells():
        eager = fixed_us + n * max(launch_us, k + node_us)
        graph = fixed_us + n * max(node_us, k + node_us)
        calls = max(3, math.ceil(plan.throughput_min_us / max(eager, graph)))
        cell = plan.latency_reps * (eager + graph) + plan.throughput_samples * calls * (eager + graph)
        cell += n * 12.0 + 300.0  # capture + instantiate, and the graph context's sync/empty_cache
        total += cell * (rounds if k == min(plan.kernel_us) else 1)
    launch_kinds = 3 if plan.use_cupy else 2
    total += rounds * sum(plan.launch_reps * launch_kinds * (n * launch_us + fixed_us) for n in plan.launch_counts)
    floor_kinds = 2 if plan.use_cupy else 1
    total += floor_kinds * sum(plan.floor_reps * 2 * (n * node_us + 300.0) + n * 12.0 for n in plan.floor_counts)
    setup_kinds = 2 if plan.measure_update else 1
    total += rounds * setup_kinds * sum(plan.setup_reps * (n * 40.0 + 1000.0) for n in plan.setup_counts)
    total += len(plan.calibration_cycles) * plan.calibration_reps * 1000.0 + 20_000.0
    return total / 1e6
