"""Timing one call: host wall clock around a synchronised call, and CUDA events for GPU span."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Timed:
    wall_us: float  # host time from before the call until the GPU finished it
    gpu_us: float  # CUDA-event time from the start marker to the end marker


def timed(fn: Callable[[], Any]) -> tuple[Any, Timed]:
    """Run ``fn`` between a device sync and a sync, so calls are measured one at a time
    (latency mode): the same protocol for eager and replay keeps the ratio fair."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start.record()
    out = fn()
    end.record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) * 1e6
    return out, Timed(wall_us=wall, gpu_us=start.elapsed_time(end) * 1e3)
