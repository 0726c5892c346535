"""Notes the analysis adds to a report where a figure alone would mislead (records: their
sentences are in launchprof.render.words.notes_text)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from launchprof.model.findings import FiguresWhy, Note, NoteCode, note
from launchprof.model.step_timing import EagerProfile, ReplayProfile, Speedup, derived
from launchprof.model.core import Report
from launchprof.run.evidence import Evidence


def with_notes(report: Report, added: Sequence[Note], first: bool = False) -> Report:
    """The report with ``added`` notes after its own (before them with ``first``), records
    and sentences alike, so the two lists stay aligned."""
    from launchprof.render.words.notes_text import note_texts

    records, texts = list(added), note_texts(added)
    if first:
        return dataclasses.replace(report, findings=[*records, *report.findings], notes=[*texts, *report.notes])
    return dataclasses.replace(report, findings=[*report.findings, *records], notes=[*report.notes, *texts])


def memory_for_no_gain(replay: ReplayProfile | None, speedup: Speedup | None) -> Note | None:
    """When replay is not measurably faster, the memory the graph holds buys nothing."""
    if replay is None or speedup is None or not replay.pool_bytes or speedup.low > 1.0:
        return None
    return note(NoteCode.MEMORY_FOR_NO_GAIN, pool_bytes=replay.pool_bytes)


def extra_nodes(eager: EagerProfile | None, replay: ReplayProfile | None) -> Note | None:
    """Graph nodes that are not the eager step's kernels (memsets, memcpys, the RNG
    prologue's fills), named by type, so "kernels" and "graph nodes" can be compared."""
    if eager is None or replay is None or eager.kernels_per_step is None or not replay.node_types:
        return None
    others = {t: n for t, n in replay.node_types.items() if t != "kernel" and n}
    extra_kernels = replay.node_types.get("kernel", 0) - eager.kernels_per_step
    if extra_kernels > 0 and not derived(eager):  # counted from the graph, the kernels are its own
        others["kernel (not in the eager trace)"] = extra_kernels
    if not others:
        return None
    named = sorted(others.items())
    counted = {"kernels_from_graph": True} if derived(eager) else {}
    return note(
        NoteCode.EXTRA_GRAPH_NODES, graph_nodes=replay.graph_nodes, eager_kernels=eager.kernels_per_step,
        node_types=[t for t, _ in named], node_counts=[n for _, n in named], **counted,
    )


def figures_from_graph(ev: Evidence) -> Note:
    """Why the eager figures were derived from the graph and CUDA events: the worker's last
    profiler plan (``profiler-plan`` events) found no session needed, or one was planned and
    left no eager trace; a run without a plan holds no eager trace to read."""
    plans = list(getattr(ev, "profiler_plan", None) or [])
    last = plans[-1] if plans else None
    if last is None:
        why = FiguresWhy.NO_TRACE
    else:
        why = FiguresWhy.TRACE_MISSING if getattr(last, "profiled", False) else FiguresWhy.NOT_NEEDED
    reason = getattr(last, "reason", None) if last is not None else None
    return note(NoteCode.FIGURES_FROM_GRAPH, why=why.value, reason=str(reason) if reason else None)


def eager_trace_lost(eager: EagerProfile, replay: ReplayProfile | None, said_lost: bool = False) -> bool:
    """The eager profile holds no kernel and no copy while the captured graph holds kernel
    nodes: the profiler lost the eager trace (as happens when an earlier
    torch.profiler session in the process had ended without a CUPTI teardown). A step that
    only copies has memcpy nodes, not kernels, and copies in its eager trace.

    ``said_lost``: the worker saw the session record no GPU activity at all under teardown
    and could not take it again (the script stopped calling first). Without a graph to
    compare with, a lost trace and a step with no CUDA work then look alike: the counts
    are unknown either way, not zero."""
    if eager.kernels_per_step != 0 or eager.memcpys_per_step:
        return False
    if said_lost:
        return True
    if replay is None:
        return False
    kernels = replay.node_types.get("kernel") if replay.node_types else replay.graph_nodes
    return bool(kernels)


def no_eager_kernels_note(eager: EagerProfile, replay: ReplayProfile | None, said_lost: bool = False) -> Note:
    """Why a target's eager profile holds no kernel: a lost trace, or a step with no GPU
    kernel (CPU tensors only, or copies only)."""
    if eager_trace_lost(eager, replay, said_lost):
        if replay is not None and replay.graph_nodes:
            return note(NoteCode.EAGER_TRACE_LOST, graph_nodes=replay.graph_nodes)
        return note(NoteCode.NO_GPU_ACTIVITY)
    if eager.memcpys_per_step or (replay is not None and replay.graph_nodes):
        return note(NoteCode.COPIES_ONLY)
    return note(NoteCode.NO_CUDA_WORK)


# In-loop and burst medians further apart than this get a note that says which is which:
# within it, the two ways of timing agree as well as reruns do.
TIMINGS_DISAGREE_RATIO = 1.5


def timings_disagree(eager: EagerProfile | None, replay: ReplayProfile | None) -> Note | None:
    """The script's own in-loop timings against the bursts the report uses, when they differ
    by more than TIMINGS_DISAGREE_RATIO on either side (eager or replay)."""
    params: dict[str, float | None] = {}
    ratios = []
    for side, profile in (("eager", eager), ("replay", replay)):
        burst = profile.step_us if profile is not None and profile.timing == "burst" else None
        loop = profile.in_loop_step_us if profile is not None else None
        burst_us, loop_us = (burst.median if burst else None), (loop.median if loop else None)
        params[f"{side}_burst_us"], params[f"{side}_loop_us"] = burst_us, loop_us
        if burst_us and loop_us and burst_us > 0 and loop_us > 0:
            ratios.append(max(burst_us / loop_us, loop_us / burst_us))
    if not ratios or max(ratios) <= TIMINGS_DISAGREE_RATIO:
        return None
    return note(NoteCode.TIMINGS_DISAGREE, ratio=max(ratios), **params)
