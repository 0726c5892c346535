"""The host-side coefficients, measured in interleaved rounds.

Eager op, bare launch, graph launch (the cells of the shortest kernels), capture +
instantiate, and in-place update are host costs: they move with the host's clock, its
other tenants and its caches, by tens of percent within a minute on shared machines.
Measured once each, in one block, two consecutive runs disagreed by 47-136%. Here every
round measures all of them, the order alternates between rounds (so a slow stretch of the
host does not always land on the same coefficient), every sample carries its round, and
the fit takes the median of the per-round coefficients and records their spread.

Why ``eager_op_us`` read about 40% above a plain loop of the same ``x.add_`` (9.9 against
7.0 µs): the old measurement differed from a plain loop in three ways. It ran
once, in one block, so a slow stretch of the host went into the figure unaveraged (the
same run-to-run drift that moved the other host coefficients by 47-136%); it ran after
``import cupy`` and an NVRTC compile had loaded a second CUDA runtime and a module into
the process, which a user's process does not have; and it called the op through a
bound-method wrapper from a closure. Per op, the wrapper is a fraction of a microsecond;
the first two are process- and moment-wide, which is what a 3 µs shift on every op needs.
All three are gone: the op is timed as the plain loop itself
(:func:`launchprof.crossover.gpu.plain_add_loop_us`), before cupy is loaded (see
:meth:`launchprof.crossover.gpu.Gpu.load_cupy`), in every round, and the median of the
rounds is kept. The GPU test ``test_eager_op_agrees_with_a_plain_loop`` times a plain loop
in the same process and holds the figure within 10% of it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from time import perf_counter

from launchprof.crossover.gpu import Gpu, cudart, ok, plain_add_loop_us
from launchprof.crossover.plans import SweepPlan
from launchprof.crossover.profile import Kind
from launchprof.crossover.rawgraph import RawPair
from launchprof.crossover.recorder import Recorder, guarded


def eager_op(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """Host µs for ``count`` tiny torch ops back to back, then one synchronize."""
    for n in plan.launch_counts:
        def one(n: int = n) -> None:
            plain_add_loop_us(gpu.tiny, n)  # warm-up: first calls of a count pay for the interpreter's caches
            rec.add(Kind.EAGER_OP, n, [plain_add_loop_us(gpu.tiny, n) for _ in range(plan.launch_reps)])

        guarded(rec, f"eager op cost ({n})", one)


def bare_launch(gpu: Gpu, plan: SweepPlan, rec: Recorder, method: str = "torch.cuda._sleep(0)", many: Callable[[int], None] | None = None) -> None:
    """Host µs for ``count`` bare kernel launches back to back, then one synchronize."""
    launch = many or gpu.spin_many(0)
    for n in plan.launch_counts:
        def one(n: int = n) -> None:
            launch(n)
            gpu.sync()
            rec.add(f"{Kind.RAW_LAUNCH}:{method}", n, [gpu.latency_us(lambda: launch(n)) for _ in range(plan.launch_reps)])

        guarded(rec, f"launch cost ({method}, {n})", one)


def cell(gpu: Gpu, plan: SweepPlan, rec: Recorder, kernel_us: float, n: int) -> None:
    """Eager against replay for ``n`` spin kernels of ``kernel_us``, in both modes, interleaved."""
    many = gpu.spin_many(gpu.cycles(kernel_us))
    g = gpu.graph_of(many, gpu.cycles(kernel_us), n)

    def eager() -> None:
        many(n)

    replay = g.replay
    eager()
    replay()  # first launch uploads the graph: keep it out of the timings
    gpu.sync()
    lat_e, lat_g = [], []
    for _ in range(plan.latency_reps):
        lat_e.append(gpu.latency_us(eager))
        lat_g.append(gpu.latency_us(replay))
    per_call = max(statistics.median(lat_e), statistics.median(lat_g), 1.0)
    calls = min(200, max(3, math.ceil(plan.throughput_min_us / per_call)))
    tp_e, tp_g = [], []
    for _ in range(plan.throughput_samples):
        tp_e.append(gpu.throughput_us(eager, calls))
        tp_g.append(gpu.throughput_us(replay, calls))
    rec.add(Kind.EAGER_LATENCY, n, lat_e, kernel_us)
    rec.add(Kind.GRAPH_LATENCY, n, lat_g, kernel_us)
    rec.add(Kind.EAGER_THROUGHPUT, n, tp_e, kernel_us)
    rec.add(Kind.GRAPH_THROUGHPUT, n, tp_g, kernel_us)


def graph_launch(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """The cells of the shortest kernels: graph launch fixed cost and per-node cost."""
    for kernel_us, n in plan.host_cells():
        guarded(rec, f"sweep cell ({kernel_us:g} µs, {n} nodes)", lambda k=kernel_us, n=n: cell(gpu, plan, rec, k, n))


def setup_costs(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """Capture, instantiate and first-launch cost per node (tiny kernels: _sleep(0))."""
    many = gpu.spin_many(0)
    for n in plan.setup_counts:
        def one(n: int = n) -> None:
            capture, inst, first = [], [], []
            for _ in range(plan.setup_reps):
                g, capture_us = gpu.capture(many, n, keep_graph=gpu.keep_graph)
                if gpu.keep_graph:
                    t0 = perf_counter()
                    g.instantiate()
                    inst.append((perf_counter() - t0) * 1e6)
                gpu.sync()
                first_us = gpu.latency_us(g.replay)
                steady = statistics.median(gpu.latency_us(g.replay) for _ in range(3))
                capture.append(capture_us)
                first.append(first_us - steady)
                del g
            rec.add(Kind.CAPTURE if gpu.keep_graph else Kind.CAPTURE_INSTANTIATE, n, capture)
            rec.add(Kind.INSTANTIATE, n, inst)
            rec.add(Kind.FIRST_LAUNCH, n, first)

        guarded(rec, f"instantiate cost ({n} nodes)", one)


def update_costs(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """cudaGraphExecUpdate against a fresh cudaGraphInstantiate, on raw handles."""
    try:
        runtime = cudart()
    except ImportError:
        rec.note("in-place update not measured: cuda.bindings (pip install cuda-bindings) is not installed")
        return
    stream = gpu.torch.cuda.current_stream().cuda_stream
    for n in plan.setup_counts:
        def one(n: int = n) -> None:
            reinst, update = [], []
            for _ in range(plan.setup_reps):
                pair = RawPair(gpu, runtime, n)
                try:
                    t0 = perf_counter()
                    (exec_,) = ok(runtime.cudaGraphInstantiate(pair.a, 0), "cudaGraphInstantiate")
                    reinst.append((perf_counter() - t0) * 1e6)
                    try:
                        t0 = perf_counter()
                        ok(runtime.cudaGraphExecUpdate(exec_, pair.b), "cudaGraphExecUpdate")
                        update.append((perf_counter() - t0) * 1e6)
                        ok(runtime.cudaGraphLaunch(exec_, stream), "cudaGraphLaunch of the updated graph")
                        gpu.sync()
                    finally:
                        ok(runtime.cudaGraphExecDestroy(exec_), "cudaGraphExecDestroy")
                finally:
                    pair.close()
            rec.add(Kind.REINSTANTIATE, n, reinst)
            rec.add(Kind.UPDATE, n, update)

        if not guarded(rec, f"in-place update ({n} nodes)", one):
            break  # the same failure would repeat for every count


def round_steps(plan: SweepPlan) -> list[Callable[[Gpu, SweepPlan, Recorder], None]]:
    """The measurements of one host round, in their forward order."""
    steps: list[Callable[[Gpu, SweepPlan, Recorder], None]] = [eager_op, bare_launch, graph_launch, setup_costs]
    if plan.measure_update:
        steps.append(update_costs)
    return steps


def host_rounds(gpu: Gpu, plan: SweepPlan, rec: Recorder) -> None:
    """All host coefficients, ``plan.host_rounds`` times; odd rounds run in reverse order."""
    steps = round_steps(plan)
    try:
        for r in range(plan.host_rounds):
            rec.round = r
            for step in steps if r % 2 == 0 else list(reversed(steps)):
                step(gpu, plan, rec)
            rec.progress.advance("host rounds")
    finally:
        rec.round = None
