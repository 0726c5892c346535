"""The sentences of the concurrency notes (analysis/concurrency.py): whether a second stream
could help and whether the graph's branches overlapped. ``launchprof.render.words.notes_text``
registers them with the others, so every format words them alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchprof.model.findings import NoteCode
from launchprof.render.words.format import duration, percent

Params = dict[str, Any]
STREAM_SENTENCES: dict[NoteCode, Callable[[Params], str]] = {}


def _stream(code: NoteCode) -> Callable[[Callable[[Params], str]], Callable[[Params], str]]:
    def register(write: Callable[[Params], str]) -> Callable[[Params], str]:
        STREAM_SENTENCES[code] = write
        return write

    return register


@_stream(NoteCode.RACES_NOT_CHECKED)
def _races_not_checked(p: Params) -> str:
    return f"stream races were not checked: {p['reason']}"


@_stream(NoteCode.RACE_CHECK_STOPPED)
def _race_check_stopped(p: Params) -> str:
    return f"the stream race check stopped ({p['reason']}): races were not checked"


@_stream(NoteCode.PARALLEL_BRANCHES)
def _parallel_branches(p: Params) -> str:
    width = f"the graph has parallel branches (up to {p['max_width']} nodes could run at once)"
    if p["overlapped"] is None:
        return width + "; there is no replay profile to show whether replay overlapped them"
    if p["overlapped"]:
        return f"{width}; replay overlapped them: {duration(p['overlap_us'])} of GPU time ran alongside other work on {p['streams']} streams"
    return f"{width}; replay did not overlap them: no GPU work ran at the same time ({p['streams']} stream(s) in the profiled replay)"


@_stream(NoteCode.DEPENDENT_OPS)
def _dependent_ops(p: Params) -> str:
    return f"each of the step's {p['ops']} ops depends on an earlier one (longest chain {p['chain_ops']} ops): a second stream would not shorten it"


@_stream(NoteCode.INDEPENDENT_CHAINS)
def _independent_chains(p: Params) -> str:
    if p["timed"]:
        longest = f"the longest takes {duration(p['chain_us'])} of the step's {duration(p['total_us'])} of GPU time"
    else:
        longest = f"the longest holds {p['chain_ops']} of the step's {p['ops']} operations"
    saving, step = p.get("saving_us"), p.get("step_us")
    if saving is not None and step:
        gain = f"save up to about {duration(saving)} of GPU time a step ({percent(saving / step, 0)} of the eager step)"
    else:
        gain = f"shorten the GPU time by at most {percent(p['at_most'], 0)}"
    return (
        f"the step's GPU work on one stream splits into independent chains: {longest}. Running the other chains on "
        f"a second stream (fork, then join before the results are used) could {gain}, less what the kernels "
        "already overlap on the device"
    )


@_stream(NoteCode.NO_STREAM_ADVICE)
def _no_stream_advice(p: Params) -> str:
    why = (
        "the step's capture failed on an autograd graph kept from an earlier call"
        if p.get("why") == "kept-autograd-graph"
        else "the step runs autograd's backward"
    )
    return (
        f"{why}: autograd puts backward's ops on streams itself, so launchprof proposes no fork/join onto a second "
        "stream for this step, though its ops form independent chains"
    )


@_stream(NoteCode.ONE_STREAM_CHAIN)
def _one_stream_chain(p: Params) -> str:
    return "the graph, captured from one stream, is a chain: whether its kernels are independent needs their data dependencies, which the race check did not give"
