"""Timing events: the bursts the report's numbers come from, the script's own timed calls,
the host's speed, and the profiler tables written beside the log."""

from __future__ import annotations

from dataclasses import dataclass, field

from launchprof.events.record import Event, omitted


@dataclass(frozen=True, kw_only=True)
class TimingStartEvent(Event):
    TYPE = "timing-start"
    bursts: int | None = None
    calls_per_burst: int | None = None
    kinds: list[str] = field(default_factory=list)
    target: int | None = None  # samples per kind if none stops early
    # How many recorded argument sets each kind cycles through (sample j used set j % n).
    sets: dict[str, int] | None = None


@dataclass(frozen=True, kw_only=True)
class TimingEvent(Event):
    """One burst of the user's step timed back to back (the reported numbers)."""

    TYPE = "timing"
    kind: str  # eager, replay, clone, compile...
    mode: str = "burst"
    burst: int | None = None
    wall_us: list[float]
    gpu_us: list[float | None] = field(default_factory=list)
    gpu_in_timed_calls: bool = False  # the GPU spans come from the host-timed calls (a long step), not a second pass


@dataclass(frozen=True, kw_only=True)
class TimingEndEvent(Event):
    TYPE = "timing-end"
    kind: str
    samples: int | None = None
    seconds: float | None = None
    stopped_early: bool = False
    why: str | None = None


@dataclass(frozen=True, kw_only=True)
class EagerTimingEvent(Event):
    """A call the script itself made, timed eagerly in its loop."""

    TYPE = "eager-timing"
    index: int | None = None
    wall_us: float
    gpu_us: float | None = None
    phase: str | None = None  # eager (before capture) or interleaved (between replays)
    mode: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplayTimingEvent(Event):
    """A call the script itself made, served by a timed replay."""

    TYPE = "replay-timing"
    index: int | None = None
    wall_us: float
    gpu_us: float | None = None
    mode: str | None = None


@dataclass(frozen=True, kw_only=True)
class HostSpeedEvent(Event):
    """The device profile's eager-op loop on this host: the prediction scales by it."""

    TYPE = "host-speed"
    eager_op_us: float | None = None
    counts: list[int] = field(default_factory=list)
    samples_us: dict[str, list[float]] = field(default_factory=dict)
    when: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class TraceEvent(Event):
    TYPE = "trace"
    what: str = "eager"  # eager, replay, whole-script
    path: str
    calls: int | None = None
    may_be_lost: bool | None = omitted()  # eager only: its session recorded no GPU activity
