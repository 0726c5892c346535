"""The host's speed during the timing bursts, in the device profile's own unit.

A device profile is measured once and cached, and predicts for every later run; the host
may be faster or slower then. On one machine (a 16-vCPU virtual machine, one NUMA
node) the same ``x.add_`` loop read 6.7 to 11.6 µs per op from one process to the next, and
two default sweeps a minute apart 9.8 and 6.6: every prediction made from a cached profile
would count launches up to 1.6x too dear or too cheap. So the worker times the profile's
eager-op loop (``x.add_`` back to back, one synchronize:
:func:`launchprof.crossover.gpu.plain_add_loop_us`, the slope between two counts, as the
sweep fits it) and the prediction scales the profile's launch costs to it.

The loop runs between the bursts, once per burst, not once after them: one 10 ms snapshot
after the bursts read 11.2 µs per op in a process whose own calibration, seconds before,
read 7.1, and scaling to it put the prediction 25% low. The host drifts within seconds; the
median over the bursts is its speed while the step was timed. About 2 ms per burst, on a
tensor of launchprof's own, outside every timed window.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import HostSpeedMissing, NoteCode
from launchprof.events.timing_events import HostSpeedEvent

COUNTS = (64, 256)  # the calibration plan's two smallest counts
WARM = 1  # untimed calls of each count before the first sample: the interpreter's caches


def slope(samples: dict[int, list[float]]) -> float:
    """µs per op from host µs for n ops and one synchronize, as the sweep fits it: the slope
    between the two counts' medians, so the synchronize's fixed cost drops out."""
    short, long = (statistics.median(samples[n]) for n in COUNTS)
    return (long - short) / (COUNTS[1] - COUNTS[0])


class HostSpeed:
    """Samples of the eager-op loop, one pair of counts at a time (``sample``), between the
    bursts; ``write`` puts their slope in a ``host-speed`` event."""

    def __init__(self, loop: Callable[[int], float]) -> None:
        self.loop = loop
        self.samples: dict[int, list[float]] = {n: [] for n in COUNTS}
        self.error: str | None = None  # why sampling stopped, if a sample failed
        for n in COUNTS:
            for _ in range(WARM):
                loop(n)

    def sample(self) -> None:
        """One sample of each count; a failure stops the sampling, never the bursts."""
        if self.failed:
            return
        try:
            pair = [self.loop(n) for n in COUNTS]  # both counts back to back, so a drift hits both alike
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            return
        for n, value in zip(COUNTS, pair):
            self.samples[n].append(value)

    @property
    def failed(self) -> bool:
        return self.error is not None

    def eager_op_us(self) -> float | None:
        return slope(self.samples) if all(self.samples[n] for n in COUNTS) else None

    def write(self, events: Any, when: str) -> None:
        op = self.eager_op_us()
        if op is None:
            if self.error:
                write_unmeasured(events, HostSpeedMissing.SAMPLE_FAILED, self.error)
            else:
                write_unmeasured(events, HostSpeedMissing.NO_SAMPLE)
            return
        samples = {str(n): v for n, v in self.samples.items()}
        events.write(HostSpeedEvent(eager_op_us=op, counts=list(COUNTS), samples_us=samples, when=when))


def write_unmeasured(events: Any, reason: HostSpeedMissing, error: str | None = None) -> None:
    """The one note for a run whose host speed is missing: the report then says why its
    prediction rests on the profile's own figures."""
    params = {"reason": reason.value} if error is None else {"reason": reason.value, "error": error}
    events.write(NoteEvent(code=NoteCode.HOST_SPEED_NOT_MEASURED, params=params))


def cuda_host_speed() -> HostSpeed:
    """A sampler on the current CUDA device (raises without one)."""
    import torch

    from launchprof.crossover.gpu import plain_add_loop_us

    x = torch.zeros(1, device="cuda")
    return HostSpeed(lambda n: plain_add_loop_us(x, n))
