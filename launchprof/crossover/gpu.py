"""torch and the launchers a sweep uses, and the timing helpers every measurement shares.

Imports torch lazily (in :class:`Gpu`), so the module itself loads on CPU-only machines.
Two timing modes:

- latency: one call, then wait (host ``perf_counter`` around launch + synchronize), the
  shape of a decode step that reads its result;
- throughput: many calls back to back, one wait, time / calls: the shape of a training loop.

Device-only times (calibration, the floor) use CUDA events behind a spin kernel that keeps
the GPU busy while the host enqueues, so the host's gaps do not show in them.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the worker's host-speed sampler imports this module: the profile models stay out of it
    from launchprof.crossover.recorder import Recorder

ASSUMED_CYCLES_PER_US = 1980.0  # H200 boost clock; only used if calibration fails


class CudaCallError(RuntimeError):
    """A cuda.bindings call returned an error code."""


def ok(result: Any, what: str) -> tuple[Any, ...]:
    """Check a cuda.bindings return value ``(err, *values)``; return the values."""
    if not isinstance(result, tuple):
        result = (result,)
    err = result[0]
    code = int(getattr(err, "value", err))
    if code != 0:
        extra = f" ({getattr(result[1], 'result', '')})" if len(result) > 1 and hasattr(result[1], "result") else ""
        raise CudaCallError(f"{what} returned {getattr(err, 'name', code)}{extra}")
    return tuple(result[1:])


def cudart() -> Any:
    """The CUDA runtime bindings (cuda-bindings, or cuda-python before 12.6)."""
    try:
        from cuda.bindings import runtime
    except ImportError:
        from cuda import cudart as runtime  # type: ignore[no-redef]  # cuda-python before 12.6
    return runtime


def plain_add_loop_us(x: Any, n: int) -> float:
    """Host µs for ``n`` ``x.add_(1.0)`` back to back and one synchronize: a user's plain loop.

    This is the eager-op measurement itself, written as the loop a user would time and
    nothing else: the op is looked up and called in the loop's own frame, with no wrapper
    function, closure or per-launch synchronisation in between. The fit takes the slope over
    several ``n``, so the one synchronize at the end lands in the intercept, not per op.
    """
    import torch

    torch.cuda.synchronize()
    t0 = perf_counter()
    for _ in range(n):
        x.add_(1.0)
    torch.cuda.synchronize()
    return (perf_counter() - t0) * 1e6


class Gpu:
    """torch, the launchers the sweep uses, and the helpers every measurement shares."""

    def __init__(self, rec: Recorder) -> None:
        import torch

        self.torch = torch
        self.sync = torch.cuda.synchronize
        self.sleep: Callable[[int], None] = getattr(torch._C, "_cuda_sleep", None) or torch.cuda._sleep
        self.tiny = torch.zeros(1, device="cuda")
        self.cycles_per_us = ASSUMED_CYCLES_PER_US
        self.keep_graph = self._keep_graph_supported()
        if not self.keep_graph:
            rec.note("torch.cuda.CUDAGraph(keep_graph=True) is not available: instantiate is timed with capture end")
        self.cupy_empty: Callable[[int], None] | None = None  # loaded on demand: see load_cupy
        self._graphs: dict[tuple[int, int], Any] = {}

    def _keep_graph_supported(self) -> bool:
        try:
            self.torch.cuda.CUDAGraph(keep_graph=True)
            return True
        except TypeError:
            return False

    def load_cupy(self, rec: Recorder) -> Callable[[int], None] | None:
        """n launches of a truly empty kernel (cupy RawKernel) on torch's current stream, or None.

        Loaded only after the host rounds: importing cupy and compiling with NVRTC loads a
        second CUDA runtime and a module into the process, and the eager-op figure must be
        what a plain torch process sees.
        """
        if self.cupy_empty is not None:
            return self.cupy_empty
        try:
            import cupy

            kernel = cupy.RawKernel('extern "C" __global__ void launchprof_empty() {}', "launchprof_empty")
            torch = self.torch
            streams: dict[int, Any] = {}

            def many(n: int) -> None:
                handle = torch.cuda.current_stream().cuda_stream
                stream = streams.get(handle)
                if stream is None:  # made once per stream, outside the timed launches that follow
                    stream = streams[handle] = _external_stream(cupy, handle)
                with stream:
                    for _ in range(n):
                        kernel((1,), (1,), ())

            many(2)
            self.sync()
            self.cupy_empty = many
        except Exception as exc:  # not installed, no NVRTC, version mismatch: the floor uses _sleep(0)
            why = f"{type(exc).__name__}: {str(exc)[:120]}"
            rec.note(f"cupy empty kernel unavailable ({why}): floor and bare launch use torch.cuda._sleep(0)")
        return self.cupy_empty

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

    def graph_of(self, many: Callable[[int], None], cycles: int, n: int) -> Any:
        """The graph of ``n`` spin kernels of ``cycles``, captured once per sweep and replayed in every round.

        Each ``torch.cuda.graph`` capture runs a full ``gc.collect()`` (about 50-130 ms with
        torch loaded): capturing the same cell again in every host round would cost seconds
        of the calibration's budget and measure nothing new.
        """
        key = (cycles, n)
        if key not in self._graphs:
            self._graphs[key], _ = self.capture(many, n)
        return self._graphs[key]

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


def _external_stream(cupy: Any, handle: int) -> Any:
    """cupy's wrapper of torch's stream, made once per stream: it was made on every timed
    call, inside the launches it timed. The cupy launchprof was tested with deprecates ``ExternalStream``
    (its ``Stream.from_external`` wants an object with ``__cuda_stream__``, not a handle)
    with a warning on every construction, which pytest printed 20 times a sweep."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return cupy.cuda.ExternalStream(handle)

