"""Capturing the target into a CUDA graph on static buffers; a failure's facts and cause come
from worker/capture_facts.py.

Follows the pattern the seeds teach: warm up on a side stream (lazy init, cuBLAS
workspaces; the first warm-up's peak allocation says whether capture has room), capture with ``capture_error_mode="thread_local"`` so other threads may
keep allocating, instantiate separately so its cost is measured on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from launchprof.events.capture_events import AnatomyEvent, CaptureEvent, GraphNodeRow
from launchprof.worker.capture_facts import recorded_warnings, failure_info
from launchprof.worker.graphinfo import counts_of, graph_anatomy
from launchprof.worker.memory import peak_of, pool_segment_bytes, room_for_capture, split_pool


@dataclass
class Captured:
    graph: torch.cuda.CUDAGraph
    static_args: tuple
    static_kwargs: dict
    static_out: Any
    capture_us: float
    instantiate_us: float | None
    graph_nodes: int | None
    node_types: dict[str, int] = field(default_factory=dict)
    pool_bytes: int | None = None  # the graph's own increment
    workspace_bytes: int | None = None  # one-time library workspaces in the first pool
    warmup_us: float | None = None
    notes: list[str] = field(default_factory=list)
    anatomy: dict[str, Any] | None = None  # nodes and edges (worker/graphinfo.py)

    def event(self, index: int, moved_args: list[str]) -> CaptureEvent:
        """The ``capture`` event of this graph; ``moved_args`` as the inputs plan has them."""
        return CaptureEvent(
            ok=True,
            index=index,
            capture_us=self.capture_us,
            warmup_us=self.warmup_us,
            instantiate_us=self.instantiate_us,
            graph_nodes=self.graph_nodes,
            node_types=self.node_types,
            pool_bytes=self.pool_bytes,
            workspace_bytes=self.workspace_bytes,
            moved_args=moved_args,
            notes=self.notes,
        )


def anatomy_event(anatomy: dict[str, Any]) -> AnatomyEvent:
    """The ``anatomy`` event from :func:`graph_anatomy`'s nodes and edges."""
    nodes = [GraphNodeRow(id=n["id"], type=n["type"], name=n.get("name")) for n in anatomy.get("nodes") or []]
    return AnatomyEvent(node_count=anatomy.get("node_count"), nodes=nodes, edges=anatomy.get("edges"))


class CaptureFailed(Exception):
    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(info.get("message", "capture failed"))
        self.info = info


def _new_graph() -> tuple[torch.cuda.CUDAGraph, bool]:
    try:
        return torch.cuda.CUDAGraph(keep_graph=True), True
    except TypeError:
        return torch.cuda.CUDAGraph(), False


def capture(
    fn: Callable[..., Any],
    static_args: tuple,
    static_kwargs: dict,
    warmup: int,
    before_capture: Callable[[], None],
) -> Captured:
    """Warm up, check memory, capture, instantiate, measure the graph's own pool.
    Raises CaptureFailed with the failure's facts and classified cause (or the low-memory
    cause); torch's warnings during the warm-up and the capture are part of those facts."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    seen: list[str] = []  # torch's warnings, evidence of a failure's cause
    t0 = time.perf_counter()
    peak = 0
    with recorded_warnings(seen), torch.cuda.stream(side):
        for i in range(warmup):
            if i == 0:
                _, peak = peak_of(lambda: fn(*static_args, **static_kwargs))
            else:
                fn(*static_args, **static_kwargs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    warmup_us = (time.perf_counter() - t0) * 1e6
    before_capture()  # undo what the warm-up calls did to the state
    torch.cuda.synchronize()
    cause = room_for_capture(peak)
    if cause is not None:
        raise CaptureFailed({"kind": "capture-allocation", "exception": None, "message": cause, "cause": cause, "chain": [], "cuda_errors": []})

    graph, kept, reserved_before, static_out, capture_us = _record(fn, static_args, static_kwargs, seen)
    notes: list[str] = []
    nodes, types, problem, anatomy = (None, {}, None, None)
    instantiate_us: float | None = None
    if kept:
        anatomy, problem = graph_anatomy(graph.raw_cuda_graph())
        nodes, types = counts_of(anatomy)
        if problem:
            notes.append(problem)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        graph.instantiate()
        torch.cuda.synchronize()
        instantiate_us = (time.perf_counter() - t1) * 1e6
    else:
        notes.append("this torch has no CUDAGraph(keep_graph=True): instantiate time is inside capture time")
    first_pool = pool_segment_bytes(graph)
    if first_pool is None or first_pool == 0:
        first_pool = max(torch.cuda.memory_reserved() - reserved_before, 0)
    own, problem = own_pool_bytes(fn, static_args, static_kwargs)
    if problem:
        notes.append(problem)
    pool, workspace = split_pool(first_pool, own)
    return Captured(
        graph=graph,
        static_args=static_args,
        static_kwargs=static_kwargs,
        static_out=static_out,
        capture_us=capture_us,
        instantiate_us=instantiate_us,
        graph_nodes=nodes,
        node_types=types,
        pool_bytes=pool,
        workspace_bytes=workspace,
        warmup_us=warmup_us,
        notes=notes,
        anatomy=anatomy,
    )


def _record(fn: Callable[..., Any], static_args: tuple, static_kwargs: dict, seen: list[str]) -> tuple[Any, bool, int, Any, float]:
    """Capture ``fn`` into a new graph: (graph, whether it is kept for instantiation, the memory
    reserved before, the output, capture µs). A failure leaves the process as it was
    (:func:`recover_after_failed_capture`) and raises CaptureFailed with its facts."""
    graph, kept = _new_graph()
    reserved_before = torch.cuda.memory_reserved()
    prior_stream = torch.cuda.current_stream()
    failure: Exception | None = None
    static_out = None
    with recorded_warnings(seen):
        t0 = time.perf_counter()
        try:
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                static_out = fn(*static_args, **static_kwargs)
        except Exception as exc:
            failure = exc
        capture_us = (time.perf_counter() - t0) * 1e6
    if failure is None:
        return graph, kept, reserved_before, static_out, capture_us
    del graph
    recover_after_failed_capture(prior_stream)
    info = failure_info(failure, seen)
    del failure  # its traceback holds the step's frames
    raise CaptureFailed(info) from None


def own_pool_bytes(fn: Callable[..., Any], static_args: tuple, static_kwargs: dict) -> tuple[int | None, str | None]:
    """Capture the step again into a new private pool and measure that pool, then free the
    graph. Returns (bytes, problem). Nothing runs on the GPU: capture only records."""
    graph = torch.cuda.CUDAGraph()
    prior_stream = torch.cuda.current_stream()
    try:
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            out = fn(*static_args, **static_kwargs)
        del out
        return pool_segment_bytes(graph), None
    except Exception as exc:
        recover_after_failed_capture(prior_stream)
        return None, f"second capture for the pool size failed: {type(exc).__name__}: {str(exc)[:200]}"
    finally:
        del graph


def recover_after_failed_capture(prior_stream: torch.cuda.Stream | None = None) -> None:
    """Leave the process as if the failed capture never happened.

    When capture fails, ``capture_end`` raises before PyTorch's generators leave capture
    mode, and the next eager random op dies with "Offset increment outside graph capture
    encountered unexpectedly". An empty capture runs the prologue and epilogue once more
    and resets that flag; the user's script then carries on eagerly.

    ``torch.cuda.graph.__exit__`` also skips its stream restore when ``capture_end`` raises:
    without ``prior_stream`` put back, every later eager op of the script (and of the timing
    bursts) would run on the graph's capture stream instead of the user's stream.
    """
    import warnings

    try:
        torch.cuda.synchronize()
    except Exception:
        pass
    if prior_stream is not None:
        torch.cuda.set_stream(prior_stream)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "the CUDA graph is empty"
            empty = torch.cuda.CUDAGraph()
            with torch.cuda.graph(empty, capture_error_mode="thread_local"):
                pass
            del empty
        torch.cuda.synchronize()
    except Exception:
        pass
    if prior_stream is not None:
        torch.cuda.set_stream(prior_stream)
