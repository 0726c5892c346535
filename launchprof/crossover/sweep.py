"""GPU measurements for ``launchprof crossover``. Imports torch lazily; records, never fits.

Every timing is repeated and kept raw (:class:`~launchprof.crossover.profile.Series`);
:mod:`launchprof.crossover.fit` turns them into the profile. Two modes, as the issue asks:

- latency: one call, then wait (host ``perf_counter`` around launch + synchronize), the
  shape of a decode step that reads its result;
- throughput: many calls back to back, one wait, time / calls: the shape of a training loop.

Device-only times (calibration, the floor) use CUDA events behind a spin kernel that keeps
the GPU busy while the host enqueues, so the host's gaps do not show in them.

Robustness is the point of this module's shape: each measurement runs guarded, so a
failure becomes a note and the sweep goes on; Ctrl-C ends the sweep and returns what was
measured, marked partial.
"""

from __future__ import annotations

import gc
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Protocol

from launchprof.crossover.profile import Kind, Series

ASSUMED_CYCLES_PER_US = 1980.0  # H200 boost clock; only used if calibration fails


@dataclass(frozen=True)
class SweepPlan:
    """What one sweep measures. The per-call cap keeps long kernels from eating the budget."""

    name: str
    kernel_us: tuple[float, ...]  # spin durations; 0 is the shortest possible kernel
    node_counts: tuple[int, ...]
    max_call_us: float  # skip (duration, count) cells whose GPU time per call exceeds this...
    always_nodes: int  # ...except counts up to this one, which every duration measures
    latency_reps: int
    throughput_samples: int
    throughput_min_us: float  # each throughput sample runs at least this long
    launch_counts: tuple[int, ...]
    launch_reps: int
    floor_counts: tuple[int, ...]
    floor_reps: int
    setup_counts: tuple[int, ...]
    setup_reps: int
    calibration_cycles: tuple[int, ...] = (0, 100_000, 400_000, 1_600_000)
    calibration_reps: int = 5
    trace_launches: int = 200

    def cells(self) -> list[tuple[float, int]]:
        """(kernel µs, nodes) pairs to measure, longest calls last within each duration."""
        return [
            (k, n)
            for k in self.kernel_us
            for n in self.node_counts
            if n <= self.always_nodes or n * (k + 1.0) <= self.max_call_us
        ]


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
    launch_reps=5,
    floor_counts=(1, 16, 64, 256, 1024),
    floor_reps=5,
    setup_counts=(16, 128, 1024),
    setup_reps=3,
)

DEFAULT_PLAN = SweepPlan(
    name="default",
    kernel_us=(0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0),
    node_counts=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048),
    max_call_us=15_000.0,
    always_nodes=64,
    latency_reps=11,
    throughput_samples=5,
    throughput_min_us=2_000.0,
    launch_counts=(64, 128, 256, 512, 1024, 2048),
    launch_reps=7,
    floor_counts=(1, 4, 16, 64, 256, 1024, 2048),
    floor_reps=7,
    setup_counts=(8, 32, 128, 512, 2048),
    setup_reps=5,
)


def estimate_seconds(plan: SweepPlan, launch_us: float = 7.0, node_us: float = 1.0, fixed_us: float = 15.0) -> float:
    """Rough wall time of a plan's sweep (no start-up), for keeping plans inside their budgets."""
    total = 0.0
    for k, n in plan.cells():
        eager = fixed_us + n * max(launch_us, k + node_us)
        graph = fixed_us + n * max(node_us, k + node_us)
        calls = max(3, math.ceil(plan.throughput_min_us / max(eager, graph)))
        total += plan.latency_reps * (eager + graph) + plan.throughput_samples * calls * (eager + graph)
        total += n * 12.0 + 300.0  # capture + instantiate, and the graph context's sync/empty_cache
    total += sum(plan.launch_reps * 3 * (n * launch_us + fixed_us) for n in plan.launch_counts)
    total += sum(plan.floor_reps * 2 * (n * node_us + 300.0) + n * 12.0 for n in plan.floor_counts)
    total += sum(plan.setup_reps * (n * 40.0 + 1000.0) for n in plan.setup_counts)
    return total / 1e6


class ProgressSink(Protocol):
    """Where the sweep reports progress; the command draws it, the sweep does not."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, name: str, steps: int = 1) -> None: ...

    def done(self, name: str) -> None: ...


class NoProgress:
    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, name: str, steps: int = 1) -> None:
        pass

    def done(self, name: str) -> None:
        pass


@dataclass(frozen=True)
class SweepResult:
    samples: tuple[Series, ...]
    notes: tuple[str, ...]
    partial: bool
    elapsed_s: float


@dataclass
class _Recorder:
    progress: ProgressSink
    samples: list[Series] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    current: str = "start-up"

    def add(self, kind: str, count: int, values: Sequence[float], kernel_us: float | None = None) -> None:
        clean = tuple(float(v) for v in values if v is not None and math.isfinite(v))
        if clean:
            self.samples.append(Series(kind=kind, count=int(count), values_us=clean, kernel_us=kernel_us))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _caused_by_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` was raised while a Ctrl-C unwound (e.g. capture_end in __exit__)."""
    seen = exc.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


def _guarded(rec: _Recorder, what: str, fn: Callable[[], None]) -> bool:
    """Run one measurement; a failure becomes a note (one line), never the end of the sweep."""
    try:
        fn()
        return True
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if _caused_by_interrupt(exc):
            raise KeyboardInterrupt from exc
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        rec.note(f"{what} failed: {type(exc).__name__}: {first}")
        return False


class CudaCallError(RuntimeError):
    """A cuda.bindings call returned an error code."""


def _ok(result: Any, what: str) -> tuple[Any, ...]:
    """Check a cuda.bindings return value ``(err, *values)``; return the values."""
    if not isinstance(result, tuple):
        result = (result,)
    err = result[0]
    code = int(getattr(err, "value", err))
    if code != 0:
        extra = f" ({getattr(result[1], 'result', '')})" if len(result) > 1 and hasattr(result[1], "result") else ""
        raise CudaCallError(f"{what} returned {getattr(err, 'name', code)}{extra}")
    return tuple(result[1:])


def _cudart() -> Any:
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        from cuda import cudart  # type: ignore[no-redef]  # cuda-python before 12.6
    return cudart


class _Gpu:
    """torch, the launchers the sweep uses, and the helpers every measurement shares."""

    def __init__(self, rec: _Recorder) -> None:
        import torch

        self.torch = torch
        self.sync = torch.cuda.synchronize
        self.sleep: Callable[[int], None] = getattr(torch._C, "_cuda_sleep", None) or torch.cuda._sleep
        self.tiny = torch.zeros(1, device="cuda")
        self.cycles_per_us = ASSUMED_CYCLES_PER_US
        self.keep_graph = self._keep_graph_supported()
        if not self.keep_graph:
            rec.note("torch.cuda.CUDAGraph(keep_graph=True) is not available: instantiate is timed with capture end")
        self.cupy_empty = self._cupy_empty(rec)

    def _keep_graph_supported(self) -> bool:
        try:
            self.torch.cuda.CUDAGraph(keep_graph=True)
            return True
        except TypeError:
            return False

    def _cupy_empty(self, rec: _Recorder) -> Callable[[int], None] | None:
        """n launches of a truly empty kernel (cupy RawKernel) on torch's current stream, or None."""
        try:
            import cupy

            kernel = cupy.RawKernel('extern "C" __global__ void launchprof_empty() {}', "launchprof_empty")
            torch = self.torch

            def many(n: int) -> None:
                with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                    for _ in range(n):
                        kernel((1,), (1,), ())

            many(2)
            self.sync()
            return many
        except Exception as exc:  # not installed, no NVRTC, version mismatch: the floor uses _sleep(0)
            why = f"{type(exc).__name__}: {str(exc)[:120]}"
            rec.note(f"cupy empty kernel unavailable ({why}): floor and bare launch use torch.cuda._sleep(0)")
            return None

    def cycles(self, kernel_us: float) -> int:
        return int(round(kernel_us * self.cycles_per_us))

    def spin_many(self, cycles: int) -> Callable[[int], None]:
        sleep = self.sleep

        def many(n: int) -> None:
            for _ in range(n):
                sleep(cycles)

        return many

    def add_many(self, n: int) -> None:
        add = self.tiny.add_
        for _ in range(n):
            add(1.0)

    def capture(self, many: Callable[[int], None], n: int, keep_graph: bool = False) -> tuple[Any, float]:
        """A graph of ``n`` launches, and the host µs spent recording them and ending capture."""
        torch = self.torch
        g = torch.cuda.CUDAGraph(keep_graph=True) if keep_graph else torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, capture_error_mode="thread_local"):
            t0 = perf_counter()
            many(n)
        return g, (perf_counter() - t0) * 1e6

    def latency_us(self, fn: Callable[[], None]) -> float:
        """One call then wait: host µs from launch to completion."""
        t0 = perf_counter()
        fn()
        self.sync()
        return (perf_counter() - t0) * 1e6

    def throughput_us(self, fn: Callable[[], None], calls: int) -> float:
        """``calls`` calls back to back, one wait: host µs per call."""
        self.sync()
        t0 = perf_counter()
        for _ in range(calls):
            fn()
        self.sync()
        return (perf_counter() - t0) * 1e6 / calls

    def device_us(self, fn: Callable[[], None], reps: int, hide_us: float) -> list[float]:
        """GPU time of ``fn`` by CUDA events, with a spin kernel before it to hide host gaps."""
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        out = []
        for _ in range(reps):
            self.sleep(self.cycles(hide_us))
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end) * 1000.0)
        return out


# --- the measurements ----------------------------------------------------------------


def _calibrate(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
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


def _launch_costs(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    """Host cost per eager launch: a torch op, and the bare launches (cheapest wins later)."""
    methods: list[tuple[str, Callable[[int], None]]] = [
        (Kind.EAGER_OP, gpu.add_many),
        (f"{Kind.RAW_LAUNCH}:torch.cuda._sleep(0)", gpu.spin_many(0)),
    ]
    if gpu.cupy_empty is not None:
        methods.append((f"{Kind.RAW_LAUNCH}:cupy-empty-kernel", gpu.cupy_empty))
    for kind, many in methods:
        for n in plan.launch_counts:
            def one(kind: str = kind, many: Callable[[int], None] = many, n: int = n) -> None:
                many(n)
                gpu.sync()
                rec.add(kind, n, [gpu.latency_us(lambda: many(n)) for _ in range(plan.launch_reps)])

            _guarded(rec, f"launch cost ({kind}, {n})", one)
            rec.progress.advance("launch costs")


def _floor(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    """Device time per replay of graphs of empty kernels: the per-node floor."""
    kernels: list[tuple[str, Callable[[int], None]]] = [("torch.cuda._sleep(0)", gpu.spin_many(0))]
    if gpu.cupy_empty is not None:
        kernels.append(("cupy-empty-kernel", gpu.cupy_empty))
    for name, many in kernels:
        for n in plan.floor_counts:
            def one(name: str = name, many: Callable[[int], None] = many, n: int = n) -> None:
                g, _ = gpu.capture(many, n)
                g.replay()
                gpu.sync()
                rec.add(f"{Kind.FLOOR}:{name}", n, gpu.device_us(g.replay, plan.floor_reps, hide_us=100.0 + 0.5 * n))
                del g

            _guarded(rec, f"floor ({name}, {n} nodes)", one)
            rec.progress.advance("floor")


def _cell(gpu: _Gpu, plan: SweepPlan, rec: _Recorder, kernel_us: float, n: int) -> None:
    """Eager against replay for ``n`` spin kernels of ``kernel_us``, in both modes, interleaved."""
    many = gpu.spin_many(gpu.cycles(kernel_us))
    g, _ = gpu.capture(many, n)

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
    del g
    rec.add(Kind.EAGER_LATENCY, n, lat_e, kernel_us)
    rec.add(Kind.GRAPH_LATENCY, n, lat_g, kernel_us)
    rec.add(Kind.EAGER_THROUGHPUT, n, tp_e, kernel_us)
    rec.add(Kind.GRAPH_THROUGHPUT, n, tp_g, kernel_us)


def _graph_sweep(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    for kernel_us, n in plan.cells():
        _guarded(rec, f"sweep cell ({kernel_us:g} µs, {n} nodes)", lambda k=kernel_us, n=n: _cell(gpu, plan, rec, k, n))
        rec.progress.advance("graph sweep")


def _setup_costs(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
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

        _guarded(rec, f"instantiate cost ({n} nodes)", one)
        rec.progress.advance("set-up costs")


class _RawPair:
    """Two same-topology raw cudaGraph_t of ``n`` spin kernels with different arguments.

    From torch (``keep_graph=True`` + ``raw_cuda_graph()``) when it offers that, else
    captured with cuda.bindings directly on a torch side stream.
    """

    def __init__(self, gpu: _Gpu, cudart: Any, n: int) -> None:
        self._cudart, self._owned, self._keep = cudart, [], []
        if gpu.keep_graph and hasattr(gpu.torch.cuda.CUDAGraph, "raw_cuda_graph"):
            a, _ = gpu.capture(gpu.spin_many(0), n, keep_graph=True)
            b, _ = gpu.capture(gpu.spin_many(1), n, keep_graph=True)
            self._keep = [a, b]
            self.a, self.b = a.raw_cuda_graph(), b.raw_cuda_graph()
        else:
            self.a, self.b = self._capture(gpu, 0, n), self._capture(gpu, 1, n)

    def _capture(self, gpu: _Gpu, cycles: int, n: int) -> Any:
        cudart, torch = self._cudart, gpu.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            mode = cudart.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal
            _ok(cudart.cudaStreamBeginCapture(side.cuda_stream, mode), "cudaStreamBeginCapture")
            try:
                gpu.spin_many(cycles)(n)
            finally:
                (graph,) = _ok(cudart.cudaStreamEndCapture(side.cuda_stream), "cudaStreamEndCapture")
        self._owned.append(graph)
        return graph

    def close(self) -> None:
        for graph in self._owned:
            _ok(self._cudart.cudaGraphDestroy(graph), "cudaGraphDestroy")
        self._owned, self._keep = [], []


def _update_costs(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    """cudaGraphExecUpdate against a fresh cudaGraphInstantiate, on raw handles."""
    try:
        cudart = _cudart()
    except ImportError:
        rec.note("in-place update not measured: cuda.bindings (pip install cuda-bindings) is not installed")
        return
    stream = gpu.torch.cuda.current_stream().cuda_stream
    for n in plan.setup_counts:
        def one(n: int = n) -> None:
            reinst, update = [], []
            for _ in range(plan.setup_reps):
                pair = _RawPair(gpu, cudart, n)
                try:
                    t0 = perf_counter()
                    (exec_,) = _ok(cudart.cudaGraphInstantiate(pair.a, 0), "cudaGraphInstantiate")
                    reinst.append((perf_counter() - t0) * 1e6)
                    try:
                        t0 = perf_counter()
                        _ok(cudart.cudaGraphExecUpdate(exec_, pair.b), "cudaGraphExecUpdate")
                        update.append((perf_counter() - t0) * 1e6)
                        _ok(cudart.cudaGraphLaunch(exec_, stream), "cudaGraphLaunch of the updated graph")
                        gpu.sync()
                    finally:
                        _ok(cudart.cudaGraphExecDestroy(exec_), "cudaGraphExecDestroy")
                finally:
                    pair.close()
            rec.add(Kind.REINSTANTIATE, n, reinst)
            rec.add(Kind.UPDATE, n, update)

        if not _guarded(rec, f"in-place update ({n} nodes)", one):
            break  # the same failure would repeat for every count
        rec.progress.advance("set-up costs")


def _traced_kernels(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    """Traced (CUPTI) durations of an empty spin kernel and a tiny add_, as analyze sees kernels.

    Runs last: a profiler session can leave launch callbacks behind that slow later launches.
    """
    from torch.profiler import ProfilerActivity, profile

    spin = gpu.spin_many(0)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        spin(plan.trace_launches)
        gpu.add_many(plan.trace_launches)
        gpu.sync()
    found: dict[str, list[float]] = {"spin": [], "add": []}
    for ev in prof.events():
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


def _setup_and_update(gpu: _Gpu, plan: SweepPlan, rec: _Recorder) -> None:
    _setup_costs(gpu, plan, rec)
    _update_costs(gpu, plan, rec)


# --- the sweep -----------------------------------------------------------------------

_PHASES: list[tuple[str, Callable[[SweepPlan], int], Callable[[_Gpu, SweepPlan, _Recorder], None]]] = [
    ("calibrate", lambda p: 1, _calibrate),
    ("launch costs", lambda p: 3 * len(p.launch_counts), _launch_costs),
    ("floor", lambda p: 2 * len(p.floor_counts), _floor),
    ("graph sweep", lambda p: len(p.cells()), _graph_sweep),
    ("set-up costs", lambda p: 2 * len(p.setup_counts), _setup_and_update),
    ("kernel trace", lambda p: 1, _traced_kernels),
]


def run_sweep(plan: SweepPlan, progress: ProgressSink | None = None) -> SweepResult:
    """Measure everything in ``plan`` on the current CUDA device.

    Ctrl-C stops the sweep and returns what was measured so far with ``partial=True``.
    Python's garbage collector is paused meanwhile: a collection inside a timed loop is
    noise that a median absorbs, but fewer of them is better.
    """
    rec = _Recorder(progress=progress or NoProgress())
    for name, total, _ in _PHASES:
        rec.progress.phase(name, total(plan))
    started = perf_counter()
    partial = False
    gc_enabled = gc.isenabled()
    gc.disable()
    gpu: _Gpu | None = None
    try:
        gpu = _Gpu(rec)
        for name, _, measure in _PHASES:
            rec.current = name
            _guarded(rec, name, lambda m=measure: m(gpu, plan, rec))
            rec.progress.done(name)
    except KeyboardInterrupt:
        partial = True
        rec.note(f"interrupted during {rec.current}: the profile holds what was measured before")
        if gpu is not None:
            try:
                gpu.sync()
            except Exception:
                pass
    finally:
        if gc_enabled:
            gc.enable()
    return SweepResult(samples=tuple(rec.samples), notes=tuple(rec.notes), partial=partial, elapsed_s=perf_counter() - started)
