"""The host's speed at the time of the bursts, in the device profile's own unit.

A device profile is measured once and cached, and predicts for every later run; the host
may be faster or slower then. On the H200 (2026-12-01) the quick calibration measured in a
freshly started machine's first minute read 9.07 µs per eager op and 14.3 µs per graph
launch, against 6.4-6.6 and 8.2-8.3 µs in full sweeps later that day: every prediction
made from that cached profile would count launches about 1.4x too dear. So after the
bursts the worker times the profile's eager-op loop once more (``x.add_`` back to back,
one synchronize: :func:`launchprof.crossover.gpu.plain_add_loop_us`, the slope between two
counts, as the sweep fits it), and the analysis says when the two differ. About 10 ms, on a
tensor of launchprof's own.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

COUNTS = (64, 256)  # the calibration plan's two smallest counts
REPS = 5


def eager_op_slope(loop: Callable[[int], float]) -> tuple[float, dict[str, list[float]]]:
    """µs per op from ``loop(n)`` (host µs for n ops and one synchronize), as the sweep fits
    it: the slope between two counts, so the synchronize's fixed cost drops out."""
    for n in COUNTS:
        loop(n)  # first calls of a count pay for the interpreter's caches
    samples: dict[int, list[float]] = {n: [] for n in COUNTS}
    for _ in range(REPS):  # interleaved, so a drift hits both counts alike
        for n in COUNTS:
            samples[n].append(loop(n))
    short, long = (statistics.median(samples[n]) for n in COUNTS)
    return (long - short) / (COUNTS[1] - COUNTS[0]), {str(n): v for n, v in samples.items()}


def measure_host_speed(events: Any) -> None:
    """Write a ``host-speed`` event; never raises (a failure is a note)."""
    try:
        import torch

        from launchprof.crossover.gpu import plain_add_loop_us

        x = torch.zeros(1, device="cuda")
        op, samples = eager_op_slope(lambda n: plain_add_loop_us(x, n))
        events.write("host-speed", eager_op_us=op, counts=list(COUNTS), samples_us=samples)
    except Exception as exc:
        events.write("note", text=f"the host's speed was not measured ({type(exc).__name__}: {str(exc)[:200]})")
