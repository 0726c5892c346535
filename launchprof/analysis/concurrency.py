"""Concurrency advice: could a second stream help, and did the graph's branches overlap?

A graph captured from one stream is a chain, so the graph alone cannot say whether the
step's kernels are independent. The sanitizer pass (worker/race_check.py) records which
earlier ops each op reads or overwrites; the longest chain of those data dependencies
bounds what a fork/join onto a second stream could gain: the GPU time cannot drop below
the critical path. Where the graph already has parallel branches, the profiled replay's
timestamps say whether the device actually ran them at once.
"""

from __future__ import annotations

from launchprof.analysis.anatomy import critical_path
from launchprof.events.capture_events import RaceCheckEvent, RaceOp
from launchprof.model.findings import Note, NoteCode, note
from launchprof.model.step_timing import Anatomy

OVERLAP_FLOOR_US = 0.5  # less than this of overlapped GPU time is timestamp noise
# A fork/join is worth proposing only where its estimated saving is both a real share of
# the step and more than a few launches' worth of time: below either, the advice is noise.
MIN_SAVING_SHARE = 0.10  # of the eager step's median
MIN_SAVING_US = 20.0


def op_chains(ops: list[RaceOp], durations: list[float] | None) -> tuple[float, float, int]:
    """(critical-path weight, total weight, ops on the critical path) of the ops' data
    dependencies; weights are the eager GPU durations when they join one to one, else 1."""
    weight = durations if durations is not None and len(durations) == len(ops) else [1.0] * len(ops)
    edges = [[d, i] for i, op in enumerate(ops) for d in op.deps if 0 <= d < i]
    path = critical_path(len(ops), edges, weight)
    return sum(weight[i] for i in path), sum(weight), len(path)


def _branches(anatomy: Anatomy) -> Note:
    overlap = anatomy.overlap_us
    overlapped = None if overlap is None else overlap >= OVERLAP_FLOOR_US
    return note(NoteCode.PARALLEL_BRANCHES, max_width=anatomy.max_width, overlapped=overlapped, overlap_us=overlap, streams=anatomy.replay_streams)


def runs_backward(race_check: RaceCheckEvent | None) -> bool:
    """Whether the step ran autograd's backward: ops counted inside it by the race check, or
    (runs recorded before that count) an op of backward's by its name."""
    if race_check is None:
        return False
    if race_check.backward_ops is not None:
        return race_check.backward_ops > 0
    return any("backward" in str(op.op) for op in race_check.ops)


def saving_estimate(
    at_most: float, chain_us: float | None, total_us: float | None, durations: list[float] | None, gpu_busy_us: float | None = None,
) -> float | None:
    """GPU time a fork/join could save per step, at most: what lies off the critical path when
    the ops carry their own times, else that share of the eager step's GPU activity (its
    traced activities, or without a trace its GPU busy time from CUDA events)."""
    if chain_us is not None and total_us is not None:
        return total_us - chain_us
    if durations:
        return at_most * sum(durations)
    if gpu_busy_us is not None and gpu_busy_us > 0:
        return at_most * gpu_busy_us
    return None


def worth_proposing(saving_us: float | None, step_us: float | None) -> bool:
    """The saving passes both thresholds against the eager step (MIN_SAVING_SHARE, MIN_SAVING_US)."""
    if saving_us is None or not step_us or step_us <= 0:
        return False
    return saving_us >= MIN_SAVING_US and saving_us >= MIN_SAVING_SHARE * step_us


def _one_stream(ops: list[RaceOp], durations: list[float] | None, autograd: str | None, step_us: float | None, busy_us: float | None) -> Note | None:
    crit, total, n_crit = op_chains(ops, durations)
    timed = durations is not None and len(durations) == len(ops)
    if total <= 0 or crit >= 0.95 * total:
        return note(NoteCode.DEPENDENT_OPS, ops=len(ops), chain_ops=n_crit)
    if autograd is not None:  # autograd puts backward's ops on streams itself: no fork/join to propose
        return note(NoteCode.NO_STREAM_ADVICE, why=autograd)
    at_most = 1 - crit / total
    chain_us, total_us = (crit, total) if timed else (None, None)
    saving = saving_estimate(at_most, chain_us, total_us, durations, busy_us)
    return note(
        NoteCode.INDEPENDENT_CHAINS, actionable=worth_proposing(saving, step_us), timed=timed, chain_us=chain_us, total_us=total_us,
        chain_ops=n_crit, ops=len(ops), at_most=at_most, factor=total / crit, saving_us=saving, step_us=step_us,
    )


def concurrency_notes(
    anatomy: Anatomy | None, race_check: RaceCheckEvent | None, eager_gpu_us: list[float] | None, kept_graph: bool = False,
    step_us: float | None = None, gpu_busy_us: float | None = None,
) -> list[Note]:
    """Notes for the report; ``eager_gpu_us`` are one eager call's GPU
    activities in order (kernels, copies, fills), ``step_us`` the eager step's median,
    ``gpu_busy_us`` its GPU busy time (what a saving is a share of without a trace). A step
    that runs autograd's backward, or whose capture failed on a kept autograd graph
    (``kept_graph``), gets no fork/join advice: autograd chooses the streams of backward's
    ops. Advice whose saving misses the thresholds (:func:`worth_proposing`) is kept as a
    record that is not actionable."""
    notes: list[Note] = []
    rc = race_check or RaceCheckEvent()
    if rc.status in ("unavailable", "skipped"):
        notes.append(note(NoteCode.RACES_NOT_CHECKED, reason=str(rc.reason)))
    elif rc.status == "failed":
        notes.append(note(NoteCode.RACE_CHECK_STOPPED, reason=str(rc.reason)))
    if anatomy is not None and (anatomy.max_width or 0) > 1:
        notes.append(_branches(anatomy))
        return notes
    ops = rc.ops
    streams = {op.stream for op in ops}
    if rc.status == "ok" and ops and len(streams) == 1 and len(ops) == (rc.ops_total if rc.ops_total is not None else len(ops)):
        autograd = "backward" if runs_backward(rc) else "kept-autograd-graph" if kept_graph else None
        line = _one_stream(ops, eager_gpu_us, autograd, step_us, gpu_busy_us)
        if line:
            notes.append(line)
    elif anatomy is not None and anatomy.max_width == 1:
        notes.append(note(NoteCode.ONE_STREAM_CHAIN))
    return notes
