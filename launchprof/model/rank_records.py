"""The combined report's multi-GPU fields (README "The report": ``ranks``, ``rank_skew``), as report models.

Kept apart from :mod:`launchprof.model.core` (which imports these) so that they need nothing
from it: a rank's summary carries plain medians; the full figures of a rank are in its own
report and run file (``NAME.rankN.*``, :mod:`launchprof.ranks.rank_paths`).
"""

from __future__ import annotations

import dataclasses

from launchprof.model.records import model

# How a rank ended, from the worst: each names who or what ended it.
RANK_STATUSES = ("environment", "target-problem", "died", "stopped", "timed-out", "interrupted", "script-failed", "ok")


@model
class RankSummary:
    """One rank: how its worker ended and the figures a reader compares across ranks."""

    rank: int
    status: str  # one of RANK_STATUSES
    cause: str | None  # one line; None when the rank's measurement completed
    exit_code: int | None  # the rank's worker process; negative: the signal that ended it
    signal: str | None = None
    verdict: str | None = None  # this rank's own verdict (its own report)
    eager_step_us: float | None = None  # medians of this rank's step_us
    replay_step_us: float | None = None
    speedup: float | None = None
    kernels_per_step: int | None = None
    graph_nodes: int | None = None
    collectives_per_step: int | None = None  # NCCL (or gloo) collective kernels per eager step
    collectives_captured: int | None = None  # collective kernels in one replay of the graph
    pool_bytes: int | None = None  # graph memory on this rank: the graph's own pool
    workspace_bytes: int | None = None  # one-time library workspaces on this rank
    hazards: int = 0  # this rank's findings (the combined list tags each with its ranks)
    run_file: str | None = None
    last_events: list[str] = dataclasses.field(default_factory=list)  # a rank that did not finish
    output_tail: list[str] = dataclasses.field(default_factory=list)  # its last output lines


@model
class RankSkew:
    """How far apart the ranks' step times are, for one side (eager or replay)."""

    side: str  # "eager" or "replay"
    slowest_rank: int
    fastest_rank: int
    slowest_us: float
    fastest_us: float
    spread: float  # (slowest - fastest) / fastest
    stragglers: list[int] = dataclasses.field(default_factory=list)  # ranks over STRAGGLER_SPREAD above the median rank
