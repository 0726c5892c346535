"""The report's ``buckets`` field (README "The report"): the bucket plan
for a step whose shapes vary, as measured on the GPU.

Kept apart from :mod:`launchprof.model.core` (which imports it) so that the report models stay
short; the same frozen dataclasses (:mod:`launchprof.model.records`), validated where read.
"""

from __future__ import annotations

import dataclasses

from launchprof.model.findings import Note
from launchprof.model.records import model as _model


@_model
class BucketArgument:
    """An argument padded by the plan, and the dimension padded."""

    argument: str
    dim: int


@_model
class BucketMeasure:
    """One capture size, measured: captured alone (pool_bytes) and in the shared pool."""

    size: int
    capture_ms: float | None  # capture + instantiate, in the shared pool
    replay_us: float | None  # median of synchronised replays
    pool_bytes: int | None  # the graph's own pool, captured alone into a private pool
    shared_added_bytes: int | None = None  # what this graph added to the shared pool (largest first)
    calls: int = 0  # observed calls this size serves
    matches: bool | None = None  # padded replay's unpadded part equals eager (None: not checked)


@_model
class BucketSpeedup:
    """End to end: the observed call sequence eager against pad -> replay -> slice."""

    median: float
    low: float
    high: float
    method: str = "ratio of medians of the whole observed sequence; 95% bootstrap interval"


@_model
class PaddingLeak:
    """An output that changes when the call is padded: padding leaks into a reduction."""

    output: str  # e.g. output[0]
    size: int  # the capture size (padded) where it was seen
    calls_size: int  # the real size of the call
    max_abs_diff: float | None
    file: str | None = None  # the user's line of the reduction over the padded dimension
    line: int | None = None
    code: str | None = None
    op: str | None = None  # mean, sum, softmax, ...


@_model
class BucketPlan:
    """Capture sizes for the varying dimension, measured where a GPU run measured them."""

    arguments: list[BucketArgument]
    recommended: list[int]
    measured: list[BucketMeasure]
    shared_pool_bytes: int | None  # all graphs captured largest first into one pool
    private_pool_bytes: int | None  # the same graphs, each in its own pool (sum)
    workspace_bytes: int | None  # one-time library workspaces (cuBLAS), not per graph
    padding_waste: float  # padded rows / rows computed, over the observed calls served
    padding_safe: bool | None  # None: not checked (no GPU measurement)
    speedup: BucketSpeedup | None
    explanation: str = ""  # the choice, in one line
    source: str = "default"  # default (1, 2, 4, 8, multiples of 8) or user (--buckets)
    observed: dict[int, int] = dataclasses.field(default_factory=dict)  # size seen -> calls
    eager_above: int | None = None  # calls larger than this run eagerly
    eager_calls: int = 0  # observed calls above the largest size
    dropped: list[int] = dataclasses.field(default_factory=list)  # sizes dropped for --bucket-memory
    memory_limit_bytes: int | None = None
    leaks: list[PaddingLeak] = dataclasses.field(default_factory=list)
    fix: str | None = None  # how to make padding safe, when it is not
    snippet: str = ""  # paste-ready: capture sizes list and capture loop
    others: list[BucketArgument] = dataclasses.field(default_factory=list)  # varying, not bucketed
    notes: list[str] = dataclasses.field(default_factory=list)  # the sentences of findings, for readers
    findings: list[Note] = dataclasses.field(default_factory=list)  # one per note, in order: its code and params
    explanation_finding: Note | None = None  # the choice as a record (bucket-choice): ``explanation`` is its sentence
    fix_finding: Note | None = None  # ``fix`` as a record (padding-leaks)
