"""The plainest timing, shared by the scripts in this folder that check launchprof's numbers:
synchronised calls back to back on the host clock, median in µs. Only torch is used."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def median_us(*calls: Callable[[], Any], n: int = 60, before: Callable[[], Any] | None = None) -> float:
    """``n`` calls, cycling through ``calls``, each between two synchronisations; ``before``
    (a barrier across ranks, say) runs untimed ahead of each call."""
    samples = []
    for i in range(n):
        fn = calls[i % len(calls)]
        if before is not None:
            before()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


def _loops_us(x: torch.Tensor, n: int, reps: int) -> list[float]:
    """µs per ``x.add_(1.0)`` in each of ``reps`` loops of ``n`` back to back (one
    synchronize per loop)."""
    per_op = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        torch.cuda.synchronize()
        per_op.append((time.perf_counter() - t0) * 1e6 / n)
    return per_op


def host_op_us(n: int = 2000, reps: int = 5) -> float:
    """µs per ``x.add_(1.0)`` back to back (one synchronize per ``n``), median of ``reps``:
    the host's speed in this process, for comparing processes whose host speed differs."""
    x = torch.zeros(1, device="cuda")
    for _ in range(200):
        x.add_(1.0)
    return statistics.median(_loops_us(x, n, reps))


def steady_host_op_us(warm_s: float = 0.3, reps: int = 9) -> float:
    """The host's speed as a reference to compare against, not to report: ``x.add_`` after
    ``warm_s`` of warm-up, fastest of ``reps`` loops of 2000. One median loop read 8.9 µs
    at a process's start and 6.5 at its end with nothing in between (H200, 2026-12-02):
    the first loops of a process run cold, and a stray interruption lands in one rep."""
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t_end = time.perf_counter() + warm_s
    while time.perf_counter() < t_end:
        _loops_us(x, 200, 1)
    return min(_loops_us(x, 2000, reps))
