"""The device-side measurements of a sweep: spin calibration, the floor, the GPU-paced cells,
the cupy bare launch, and the traced kernel durations. Each runs once per sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchprof.crossover.gpu import ASSUMED_CYCLES_PER_US, Gpu
from launchprof.crossover.host import bare_launch, cell
from launchprof.crossover.plans import SweepPlan
from launchprof.crossover.profile import Kind
from launchprof.crossover.recorder import Recorder, guarded


def calibrate(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """Cycles per µs of the spin kernel, so that spin durations are known in µs."""
    gpu.sleep(40_000_000)  # tens of ms of spinning lets the clocks settle first
    gpu.sync()
    for cycles in plan.calibration_cycles:
        rec.add(Kind.CALIBRATION, cycles, gpu.device_us(lambda c=cycles: gpu.sleep(c), plan.calibration_reps, hide_us=200.0))
    from launchprof.crossover.fit import calibrated_cycles_per_us

    measured = calibrated_cycles_per_us(rec.samples)
    if measured is None or not 100.0 < measured < 10_000.0:
        rec.note(f"spin calibration gave {measured!r} cycles/µs; assumed {ASSUMED_CYCLES_PER_US:.0f}")
    else:
        gpu.cycles_per_us = measured
    rec.progress.advance("calibrate")


def floor(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """Device time per replay of graphs of empty kernels: the per-node floor.

    With cupy allowed, this is where it is loaded (after the host rounds), and its bare
    launch is measured once here too.
    """
    kernels: list[tuple[str, Callable[[int], None]]] = [("torch.cuda._sleep(0)", gpu.spin_many(0))]
    empty = gpu.load_cupy(rec) if plan.use_cupy else None
    if empty is not None:
        kernels.append(("cupy-empty-kernel", empty))
        bare_launch(gpu, plan, rec, "cupy-empty-kernel", empty)
    for name, many in kernels:
        for n in plan.floor_counts:
            def one(name: str = name, many: Callable[[int], None] = many, n: int = n) -> None:
                g, _ = gpu.capture(many, n)
                g.replay()
                gpu.sync()
                rec.add(f"{Kind.FLOOR}:{name}", n, gpu.device_us(g.replay, plan.floor_reps, hide_us=100.0 + 0.5 * n))
                del g

            guarded(rec, f"floor ({name}, {n} nodes)", one)
            rec.progress.advance("floor")


def graph_sweep(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """The cells of longer kernels (the shortest ones are measured in every host round)."""
    for kernel_us, n in plan.device_cells():
        guarded(rec, f"sweep cell ({kernel_us:g} µs, {n} nodes)", lambda k=kernel_us, n=n: cell(gpu, plan, rec, k, n))
        rec.progress.advance("graph sweep")


def traced_kernels(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """Traced (CUPTI) durations of an empty spin kernel and a tiny add_, as analyze sees kernels.

    Runs last: a profiler session can leave launch callbacks behind that slow later launches.
    A plan with ``trace_launches=0`` skips it (``--quick`` and the calibration inside
    ``analyze`` do): a process's first CUPTI session costs seconds.
    """
    if plan.trace_launches <= 0:
        rec.note(
            "kernel trace skipped: no traced empty-kernel duration, so predictions from profiled kernels "
            "count a node's cost beyond its traced kernel as 0, with the graph gap as its upper bound"
        )
        rec.progress.advance("kernel trace")
        return
    spin = gpu.spin_many(0)
    with kernel_trace("cuda") as prof:
        spin(plan.trace_launches)
        gpu.add_many(plan.trace_launches)
        gpu.sync()
    found: dict[str, list[float]] = {"spin": [], "add": []}
    for ev in prof.function_events:
        if str(getattr(ev, "device_type", "")).endswith("CPU"):
            continue
        name = ev.name or ""
        key = "spin" if "spin_kernel" in name else ("add" if "elementwise" in name else None)
        if key:
            found[key].append(float(ev.time_range.elapsed_us()))
    for key, values in found.items():
        rec.add(f"{Kind.TRACED}:{key}", 1, values)
    if not found["spin"]:
        rec.note("no spin kernel found in the torch.profiler trace: predictions do not correct for traced kernel overhead")
    rec.progress.advance("kernel trace")


def kernel_trace(device: str | None) -> Any:
    """A Kineto session of ``device``'s kernels only (None: CPU ops only), as a context manager.

    ``torch.autograd.profiler.profile`` is what ``torch.profiler.profile`` runs underneath,
    without its ``prepare_trace``, whose ``hasattr(torch, "_inductor")`` imports torch._inductor
    and with it torch._dynamo, sympy and triton where installed: a kernel trace needs none of
    them, and on CPU (torch 2.13) a process's first session took 1.1 s with that import and
    0.002 s without it.
    """
    from torch.autograd.profiler import profile

    if device is None:
        return profile(use_kineto=True)
    return profile(use_cpu=False, use_device=device, use_kineto=True)
