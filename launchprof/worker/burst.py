"""Timing the user's step back to back, in interleaved bursts (the pyperf/timeit idea).

Inside the plan, every timed call sits between the script's Python and launchprof's
bookkeeping, which inflates small steps by different amounts for eager and replay. Here
the calls are made on recorded argument sets with nothing but the call between two device
synchronisations (and, in a step of 1 ms or more, one CUDA event's record: ``ONE_PASS_US``):
every closure, CUDA event and sample list is built before a burst and the events are
written after it. Eager and replay alternate which goes first, so slow drifts of the
machine (clocks, other processes) fall on both.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from launchprof.worker import rank_sync
from launchprof.events.timing_events import TimingEndEvent, TimingEvent, TimingStartEvent
from launchprof.worker.event_writer import EventWriter

# Calls of one kind per burst: enough that switching kinds is a small part of the burst,
# few enough that the order alternates several times within `repeat` samples.
CALLS_PER_BURST = 10
# A kind stops after this many seconds of measured calls (a long step still finishes).
TIME_CAP_S = 5.0
# Argument sets recorded for the bursts: calls cycle through them, so one odd set (a cold
# buffer, an unusual value) cannot decide the median.
BURST_SETS = 4
# A step whose median host time in a burst reached this takes its GPU span inside the
# host-timed calls from the next burst on: the end event's record (about 4 µs of host time
# on an H200) is then under 0.5% of it, and the second pass would double the bursts' time.
ONE_PASS_US = 1000.0


@dataclass
class Kind:
    """One thing to time: a list of zero-argument calls, cycled through."""

    name: str
    calls: list[Callable[[], Any]]
    samples: int = 0
    seconds: float = 0.0
    stopped: bool = False
    why: str = ""
    walls: list[float] = field(default_factory=list)
    starts: list[Any] = field(default_factory=list)
    ends: list[Any] = field(default_factory=list)
    changes_state: bool = True  # False: its calls change nothing of the user's (the clone of the outputs), so no put-back follows them
    one_pass: bool = False  # the next block takes the GPU span in its host-timed calls (ONE_PASS_US)


def schedule(repeat: int) -> tuple[int, int]:
    """(bursts, calls per kind per burst): at least ``repeat`` samples per kind, an even
    number of bursts (each order equally often), at least two."""
    per = max(1, min(CALLS_PER_BURST, repeat))
    bursts = max(2, math.ceil(repeat / per))
    return bursts + bursts % 2, per


def run_bursts(
    kinds: list[Kind],
    repeat: int,
    events: EventWriter,
    time_cap_s: float = TIME_CAP_S,
    between: Callable[[], None] | None = None,
    reset: Callable[[], None] | None = None,
) -> None:
    """Time every kind in alternating bursts; one ``timing`` event per burst per kind.

    ``kinds`` is ordered (eager, replay, clone): odd bursts run the replay side first.
    ``between`` runs after each burst, outside the timed calls (the host-speed sample).
    ``reset`` puts the user's state back after every pass of ``CALLS_PER_BURST`` calls of a kind
    that changes it (``Kind.changes_state``), outside
    the timed calls: a decode step advances its cache's position on every call, and a
    hundred calls in a row would run it past the cache's end."""
    bursts, per = schedule(repeat)
    # sets: how many recorded argument sets each kind cycles through (sample j used set
    # j % sets), so the analysis can tell a step whose time depends on its arguments.
    events.write(
        TimingStartEvent(
            bursts=bursts, calls_per_burst=per, kinds=[k.name for k in kinds], target=bursts * per, sets={k.name: len(k.calls) for k in kinds}
        )
    )
    for k in kinds:
        k.walls = [0.0] * per
        k.starts = [torch.cuda.Event(enable_timing=True) for _ in range(per)]
        k.ends = [torch.cuda.Event(enable_timing=True) for _ in range(per)]
        k.calls[0]()  # one untimed call: lazy initialisation and cold caches stay outside
        if reset is not None and k.changes_state:
            reset()
    torch.cuda.synchronize()
    for b in range(bursts):
        order = kinds if b % 2 == 0 or len(kinds) == 1 else [*kinds[1:], kinds[0]]
        blocks = {k.name: _block(k, per, time_cap_s, reset if k.changes_state else None) for k in order}
        for k in kinds:
            n, in_timed = blocks.get(k.name, (0, False))
            if n:
                gpu = [k.starts[i].elapsed_time(k.ends[i]) * 1e3 for i in range(n)]
                events.write(
                    TimingEvent(kind=k.name, mode="burst", burst=b, wall_us=[w * 1e6 for w in k.walls[:n]], gpu_us=gpu, gpu_in_timed_calls=in_timed)
                )
        if between is not None:
            between()
        if all(k.stopped for k in kinds):
            break
    for k in kinds:
        target = bursts * per
        early = k.samples < target and k.stopped
        events.write(TimingEndEvent(kind=k.name, samples=k.samples, seconds=k.seconds, stopped_early=early, why=k.why if early else ""))


def _block(k: Kind, per: int, time_cap_s: float, reset: Callable[[], None] | None = None) -> tuple[int, bool]:
    """``per`` synchronised calls of one kind; returns how many were timed, and whether their
    GPU spans came from the timed calls themselves.

    The host clock times bare calls: a CUDA event recorded inside that window costs several
    µs per call (8-10 µs on a 2-kernel step, measured on an H200), which is launchprof's, not
    the step's. The GPU span is measured on the same calls run once more, each between two
    events and a synchronisation, outside any host-timed window; a long step's span comes
    from the timed calls themselves (``ONE_PASS_US``)."""
    if k.stopped:
        return 0, False
    sync, perf = torch.cuda.synchronize, time.perf_counter
    calls, walls, starts, ends = k.calls, k.walls, k.starts, k.ends
    ncalls = len(calls)
    n = 0
    agree = rank_sync.agreement()  # None unless the step is distributed (then: barrier + one stop decision)
    one_pass = k.one_pass and agree is None  # ranks keep the same number of agreements per call
    for i in range(per):
        fn = calls[(k.samples + i) % ncalls]
        if agree is not None and agree(k.seconds >= time_cap_s):
            k.stopped, k.why = True, f"stopped at the {time_cap_s:g} s time cap (reached on at least one rank)"
            break
        sync()
        if one_pass:
            starts[i].record()  # before the clock starts: only the end's record is inside
        t0 = perf()
        fn()
        if one_pass:
            ends[i].record()
        sync()
        walls[i] = perf() - t0
        n += 1
        k.seconds += walls[i]
        if agree is None and k.seconds >= time_cap_s:
            k.stopped, k.why = True, f"stopped at the {time_cap_s:g} s time cap"
            break
    if n and statistics.median(walls[:n]) * 1e6 >= ONE_PASS_US:
        k.one_pass = True
    if not one_pass:
        if reset is not None:
            reset()  # the second pass starts where the first did
        _gpu_pass(k, n, agree)
    if reset is not None:
        reset()
    k.samples += n
    return n, one_pass


def _gpu_pass(k: Kind, n: int, agree: rank_sync.Agree | None) -> None:
    """The first ``n`` calls of the block once more, each between two events."""
    calls, ncalls = k.calls, len(k.calls)
    for i in range(n):
        fn, start, end = calls[(k.samples + i) % ncalls], k.starts[i], k.ends[i]
        if agree is not None:
            agree(False)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
