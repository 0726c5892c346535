"""Bucket-plan events (worker/buckets.py): the sizes to capture for a varying dimension,
what each costs, whether padding is safe, and the plan against eager over the calls seen."""

from __future__ import annotations

from dataclasses import dataclass, field

from launchprof.events.record import Event, omitted, written_when


@dataclass(frozen=True, kw_only=True)
class BucketArgumentRow:
    argument: str | None = None
    dim: int | None = None


@dataclass(frozen=True, kw_only=True)
class BucketPlanEvent(Event):
    TYPE = "bucket-plan"
    arguments: list[BucketArgumentRow] = field(default_factory=list)  # vary together along one dimension
    sizes: list[int] = field(default_factory=list)  # the capture sizes to measure
    source: str | None = None  # user (--buckets) or default
    limit_bytes: int | None = None
    recorded_sizes: list[int] = field(default_factory=list)


def _private(e: BucketMeasureEvent) -> bool:
    return e.stage == "private"


@dataclass(frozen=True, kw_only=True)
class BucketMeasureEvent(Event):
    """One size captured alone into its own pool (``private``) or into the shared pool."""

    TYPE = "bucket-measure"
    stage: str | None = None  # private, shared
    size: int | None = None
    pool_bytes: int | None = written_when(_private)  # null: the capture ran out of memory
    capture_ms: float | None = omitted()
    reserved_bytes: int | None = omitted()
    error: str | None = omitted()
    replay_us: float | None = omitted()
    added_bytes: int | None = omitted()
    pool_total_bytes: int | None = omitted()


@dataclass(frozen=True, kw_only=True)
class BucketCheckEvent(Event):
    """A padded replay's real rows against eager on the same call."""

    TYPE = "bucket-check"
    size: int | None = None  # the capture size
    calls_size: int | None = None  # the call's real size
    derived: bool | None = None  # cut from a recorded call so that every size is checked padded
    match: bool | None = None
    max_abs_diff: float | None = None
    worst: str | None = None  # the first output that differs


@dataclass(frozen=True, kw_only=True)
class BucketLeakEvent(Event):
    """The op, and the user's line, where padding reaches the real rows."""

    TYPE = "bucket-leak"
    size: int | None = None
    calls_size: int | None = None
    output: str | None = None
    max_abs_diff: float | None = None
    op: str | None = None
    file: str | None = None
    line: int | None = None
    code: str | None = None


@dataclass(frozen=True, kw_only=True)
class BucketEndEvent(Event):
    TYPE = "bucket-end"
    kept: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    shared_pool_bytes: int | None = None
    workspace_bytes: int | None = None
    private_pool_bytes: int | None = None
    eager_us: list[float] = field(default_factory=list)  # the observed call sequence, timed whole
    plan_us: list[float] = field(default_factory=list)
    sequence_calls: int | None = None


BucketEvent = BucketPlanEvent | BucketMeasureEvent | BucketCheckEvent | BucketLeakEvent | BucketEndEvent
