"""GPU memory around capture: room for it, the graph's own pool, launchprof's own bytes.

A graph's private pool after the first capture in a process also holds one-time library
workspaces (cuBLAS allocates about 32 MiB on Hopper the first time it runs on the capture
stream), which are not the graph's cost. Capturing the same step once more into a fresh
pool measures only what the graph itself keeps; the difference is the one-time part.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from launchprof.events.capture_events import MemoryEvent

# Headroom capture needs beyond the eager step's peak: a first cuBLAS workspace (32 MiB on
# Hopper) plus the allocator's segment rounding (2 MiB small-block and 20 MiB large-block
# segments).
CAPTURE_MARGIN_BYTES = 64 * 2**20


def pool_bytes(pool: Any) -> int | None:
    """Bytes of the allocator segments tagged with memory pool ``pool`` (a graph's ``pool()``
    or a ``graph_pool_handle()``); None where the snapshot cannot say."""
    try:
        wanted = tuple(pool)
        return sum(int(seg.get("total_size", 0)) for seg in torch.cuda.memory_snapshot() if tuple(seg.get("segment_pool_id", ())) == wanted)
    except Exception:
        return None


def pool_segment_bytes(graph: torch.cuda.CUDAGraph) -> int | None:
    """Bytes of the segments tagged with this graph's private pool id."""
    try:
        return pool_bytes(graph.pool())
    except Exception:
        return None


def peak_of(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn`` and return its result with the peak bytes it allocated above the start."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out = fn()
    torch.cuda.synchronize()
    return out, max(torch.cuda.max_memory_allocated() - base, 0)


def room_for_capture(peak_bytes: int) -> str | None:
    """None if capture fits, else a one-line cause. Blocks cached by the allocator but
    unused count as free: the allocator releases them when a capture needs the space."""
    free, _ = torch.cuda.mem_get_info()
    cached = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    available = free + max(cached, 0)
    need = peak_bytes + CAPTURE_MARGIN_BYTES
    if available >= need:
        return None
    mib = 2**20
    return (
        f"too little free GPU memory to capture: {available / mib:.0f} MiB free, the step needs about "
        f"{need / mib:.0f} MiB ({peak_bytes / mib:.0f} MiB eager peak + {CAPTURE_MARGIN_BYTES // mib} MiB margin); measured eagerly only"
    )


def split_pool(first_pool: int | None, own: int | None) -> tuple[int | None, int | None]:
    """(graph's own pool bytes, one-time workspace bytes) from the first pool and the
    second capture's pool."""
    if own is None:
        return first_pool, None
    if first_pool is None:
        return own, None
    return own, max(first_pool - own, 0)


def tensor_bytes(tensors: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t.is_cuda)


def memory_event(static_bytes: int, clone_bytes: int, pool_bytes: int | None, workspace_bytes: int | None) -> MemoryEvent:
    """The ``memory`` event, with the device's free and total memory now."""
    free, total = torch.cuda.mem_get_info()
    return MemoryEvent(
        free_bytes=int(free),
        total_bytes=int(total),
        static_bytes=int(static_bytes),
        clone_bytes=int(clone_bytes),
        pool_bytes=pool_bytes,
        workspace_bytes=workspace_bytes,
    )
