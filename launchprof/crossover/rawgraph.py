"""Raw cudaGraph_t handles for timing cudaGraphExecUpdate against re-instantiation."""

from __future__ import annotations

from typing import Any

from launchprof.crossover.gpu import Gpu, ok


class RawPair:
    """Two same-topology raw cudaGraph_t of ``n`` spin kernels with different arguments.

    From torch (``keep_graph=True`` + ``raw_cuda_graph()``) when it offers that, else
    captured with cuda.bindings directly on a torch side stream.
    """

    def __init__(self, gpu: Gpu, runtime: Any, n: int) -> None:
        self._runtime, self._owned, self._keep = runtime, [], []
        if gpu.keep_graph and hasattr(gpu.torch.cuda.CUDAGraph, "raw_cuda_graph"):
            a, _ = gpu.capture(gpu.spin_many(0), n, keep_graph=True)
            b, _ = gpu.capture(gpu.spin_many(1), n, keep_graph=True)
            self._keep = [a, b]
            self.a, self.b = a.raw_cuda_graph(), b.raw_cuda_graph()
        else:
            self.a, self.b = self._capture(gpu, 0, n), self._capture(gpu, 1, n)

    def _capture(self, gpu: Gpu, cycles: int, n: int) -> Any:
        runtime, torch = self._runtime, gpu.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            mode = runtime.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal
            ok(runtime.cudaStreamBeginCapture(side.cuda_stream, mode), "cudaStreamBeginCapture")
            try:
                gpu.spin_many(cycles)(n)
            finally:
                (graph,) = ok(runtime.cudaStreamEndCapture(side.cuda_stream), "cudaStreamEndCapture")
        self._owned.append(graph)
        return graph

    def close(self) -> None:
        for graph in self._owned:
            ok(self._runtime.cudaGraphDestroy(graph), "cudaGraphDestroy")
        self._owned, self._keep = [], []
