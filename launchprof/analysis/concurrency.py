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
from launchprof.events.capture import RaceCheckEvent, RaceOp
from launchprof.models import Anatomy

OVERLAP_FLOOR_US = 0.5  # less than this of overlapped GPU time is timestamp noise


def op_chains(ops: list[RaceOp], durations: list[float] | None) -> tuple[float, float, int]:
    """(critical-path weight, total weight, ops on the critical path) of the ops' data
    dependencies; weights are the eager GPU durations when they join one to one, else 1."""
    weight = durations if durations is not None and len(durations) == len(ops) else [1.0] * len(ops)
    edges = [[d, i] for i, op in enumerate(ops) for d in op.deps if 0 <= d < i]
    path = critical_path(len(ops), edges, weight)
    return sum(weight[i] for i in path), sum(weight), len(path)


def _branches(anatomy: Anatomy) -> str:
    width = f"the graph has parallel branches (up to {anatomy.max_width} nodes could run at once)"
    if anatomy.overlap_us is None:
        return width + "; there is no replay profile to show whether replay overlapped them"
    if anatomy.overlap_us >= OVERLAP_FLOOR_US:
        return f"{width}; replay overlapped them: {anatomy.overlap_us:.1f} µs of GPU time ran alongside other work on {anatomy.replay_streams} streams"
    return f"{width}; replay did not overlap them: no GPU work ran at the same time ({anatomy.replay_streams} stream(s) in the profiled replay)"


def _one_stream(ops: list[RaceOp], durations: list[float] | None) -> str | None:
    crit, total, n_crit = op_chains(ops, durations)
    timed = durations is not None and len(durations) == len(ops)
    if total <= 0 or crit >= 0.95 * total:
        return f"each of the step's {len(ops)} ops depends on an earlier one (longest chain {n_crit} ops): a second stream would not shorten it"
    unit = f"{crit:.1f} µs of {total:.1f} µs GPU time" if timed else f"{n_crit} of {len(ops)} ops (op counts: the eager kernels do not join the ops one to one)"
    return (
        f"the step's ops on one stream form independent chains: the longest holds {unit}; a fork/join of the other chains "
        f"onto a second stream could shorten the GPU time by at most {1 - crit / total:.0%} (x{total / crit:.2f}), less what the kernels already overlap on the device"
    )


def concurrency_notes(anatomy: Anatomy | None, race_check: RaceCheckEvent | None, eager_gpu_us: list[float] | None) -> list[str]:
    """Sentences for the report's notes; ``eager_gpu_us`` are one eager call's GPU
    activities in order (kernels, copies, fills)."""
    notes: list[str] = []
    rc = race_check or RaceCheckEvent()
    if rc.status in ("unavailable", "skipped"):
        notes.append(f"stream races were not checked: {rc.reason}")
    elif rc.status == "failed":
        notes.append(f"the stream race check stopped ({rc.reason}): races were not checked")
    if anatomy is not None and (anatomy.max_width or 0) > 1:
        notes.append(_branches(anatomy))
        return notes
    ops = rc.ops
    streams = {op.stream for op in ops}
    if rc.status == "ok" and ops and len(streams) == 1 and len(ops) == (rc.ops_total if rc.ops_total is not None else len(ops)):
        line = _one_stream(ops, eager_gpu_us)
        if line:
            notes.append(line)
    elif anatomy is not None and anatomy.max_width == 1:
        notes.append("the graph, captured from one stream, is a chain: whether its kernels are independent needs their data dependencies, which the race check did not give")
    return notes
