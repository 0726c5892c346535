"""A stand-in for the sweep: samples drawn from the crossover model with known coefficients.

The fit must recover what went in, whatever the GPU; this module is how CPU tests (and
anyone changing the fit) check that without a GPU. The defaults are H200-like figures
from docs/architecture.md ("Observed on an H200"): about 7 µs per eager torch op, about 1 µs per
replayed node, about 9 µs per node to capture and instantiate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from launchprof.crossover.profile import Kind, Series
from launchprof.crossover.plans import SweepPlan


@dataclass(frozen=True)
class SimulatedDevice:
    """True coefficients (µs) of a device that follows the crossover model exactly."""

    eager_op_us: float = 7.0
    raw_launch_us: float = 2.4
    eager_fixed_us: float = 6.0
    eager_gap_us: float = 1.2
    graph_fixed_us: float = 9.0
    graph_node_us: float = 0.95
    graph_gap_us: float = 0.4
    graph_host_us: float = 3.0  # host cost of one graph launch (bounds back-to-back replays)
    floor_fixed_us: float = 2.0
    floor_node_us: float = 0.9
    capture_fixed_us: float = 5.0
    capture_node_us: float = 2.0
    instantiate_fixed_us: float = 20.0
    instantiate_node_us: float = 7.0
    update_node_us: float = 1.5
    reinstantiate_node_us: float = 6.5
    first_launch_node_us: float = 0.1
    cycles_per_us: float = 1980.0
    traced_spin_us: float = 1.0
    traced_add_us: float = 1.3

    def eager_per_kernel(self, kernel_us: float) -> float:
        return max(self.raw_launch_us, kernel_us + self.eager_gap_us)

    def graph_per_node(self, kernel_us: float) -> float:
        return max(self.graph_node_us, kernel_us + self.graph_gap_us)

    def eager_latency(self, kernel_us: float, n: int) -> float:
        return self.eager_fixed_us + n * self.eager_per_kernel(kernel_us)

    def graph_latency(self, kernel_us: float, n: int) -> float:
        return self.graph_fixed_us + n * self.graph_per_node(kernel_us)

    def eager_throughput(self, kernel_us: float, n: int) -> float:
        return 1.0 + n * self.eager_per_kernel(kernel_us)

    def graph_throughput(self, kernel_us: float, n: int) -> float:
        return max(self.graph_host_us, 1.0 + n * self.graph_per_node(kernel_us))


def simulate_samples(
    plan: SweepPlan,
    device: SimulatedDevice | None = None,
    noise: float = 0.02,
    seed: int = 0,
    round_drift: tuple[float, ...] | None = None,
) -> list[Series]:
    """What a sweep of ``plan`` would record on ``device``, with lognormal timing noise.

    Host costs are recorded per round, as the sweep measures them; ``round_drift`` scales
    round r's host costs by ``round_drift[r]`` (a host that slowed down between rounds),
    which is how a test makes a profile that must be flagged noisy.
    """
    d = device or SimulatedDevice()
    rng = np.random.default_rng(seed)
    out: list[Series] = []
    drift = round_drift or (1.0,) * plan.host_rounds

    def add(kind: str, count: int, true_us: float, reps: int, kernel_us: float | None = None, rnd: int | None = None) -> None:
        values = true_us * rng.lognormal(0.0, noise, size=reps)
        out.append(Series(kind=kind, count=count, values_us=tuple(float(v) for v in values), kernel_us=kernel_us, round=rnd))

    def cell(k: float, n: int, scale: float = 1.0, rnd: int | None = None) -> None:
        add(Kind.EAGER_LATENCY, n, scale * d.eager_latency(k, n), plan.latency_reps, k, rnd)
        add(Kind.GRAPH_LATENCY, n, scale * d.graph_latency(k, n), plan.latency_reps, k, rnd)
        add(Kind.EAGER_THROUGHPUT, n, scale * d.eager_throughput(k, n), plan.throughput_samples, k, rnd)
        add(Kind.GRAPH_THROUGHPUT, n, scale * d.graph_throughput(k, n), plan.throughput_samples, k, rnd)

    for cycles in plan.calibration_cycles:
        add(Kind.CALIBRATION, cycles, 1.5 + cycles / d.cycles_per_us, plan.calibration_reps)
    for r, scale in enumerate(drift):
        for n in plan.launch_counts:
            add(Kind.EAGER_OP, n, scale * (8.0 + d.eager_op_us * n), plan.launch_reps, rnd=r)
            add(f"{Kind.RAW_LAUNCH}:torch.cuda._sleep(0)", n, scale * (6.0 + d.raw_launch_us * n), plan.launch_reps, rnd=r)
        for k, n in plan.host_cells():
            cell(k, n, scale, r)
        for n in plan.setup_counts:
            add(Kind.CAPTURE, n, scale * (d.capture_fixed_us + d.capture_node_us * n), plan.setup_reps, rnd=r)
            add(Kind.INSTANTIATE, n, scale * (d.instantiate_fixed_us + d.instantiate_node_us * n), plan.setup_reps, rnd=r)
            add(Kind.FIRST_LAUNCH, n, 3.0 + d.first_launch_node_us * n, plan.setup_reps, rnd=r)
            if plan.measure_update:
                add(Kind.REINSTANTIATE, n, scale * (15.0 + d.reinstantiate_node_us * n), plan.setup_reps, rnd=r)
                add(Kind.UPDATE, n, scale * (5.0 + d.update_node_us * n), plan.setup_reps, rnd=r)
    for n in plan.floor_counts:
        add(f"{Kind.FLOOR}:torch.cuda._sleep(0)", n, d.floor_fixed_us + d.floor_node_us * n, plan.floor_reps)
    for k, n in plan.device_cells():
        cell(k, n)
    if plan.trace_launches > 0:
        add(f"{Kind.TRACED}:spin", 1, d.traced_spin_us, plan.trace_launches)
        add(f"{Kind.TRACED}:add", 1, d.traced_add_us, plan.trace_launches)
    return out
