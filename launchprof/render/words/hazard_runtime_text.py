"""The sentence of each hazard code the runtime rules (launchprof.hazards) write, from its params.

One function per code (launchprof.model.hazard_codes), every number through the one formatter.
``diff_shown`` False leaves out a max |diff| that a renderer states once for the report
(the validation row's, launchprof.render.figures.hazard_message).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from launchprof.model.hazard_codes import HazardCode
from launchprof.render.words.format import count, diff, number, significant

Params = Mapping[str, Any]
Write = Callable[[Params], str]
RUNTIME: dict[str, Write] = {}


def _says(code: HazardCode) -> Callable[[Write], Write]:
    def register(write: Write) -> Write:
        RUNTIME[code.value] = write
        return write

    return register


def short_name(name: str, width: int = 70) -> str:
    """A kernel name a line can hold: no ``void``, no template arguments or parameters."""
    text = re.sub(r"^void\s+", "", str(name))
    cut = min((i for i in (text.find("<"), text.find("(")) if i > 0), default=len(text))
    text = text[:cut]
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _max_diff(value: Any) -> str:
    """A max |diff|; one that is not finite (a NaN output) as Python writes it."""
    return diff(value) if isinstance(value, (int, float)) and math.isfinite(value) else f"{value:.3g}"


def _in_code(p: Params) -> str:
    return f" in `{p['code']}`" if p.get("code") else ""


@_says(HazardCode.SYNC)
def _sync(p: Params) -> str:
    return f"{p.get('what') or 'synchronising call'}{_in_code(p)} waits for the GPU: capture fails at this line"


@_says(HazardCode.PAGEABLE_COPY)
def _pageable(p: Params) -> str:
    return f"host-to-device copy from pageable (non-pinned) memory{_in_code(p)}: capture cannot record it"


# The error's own words are said once: its first line, this long at most (a CUDA error's
# message is followed by torch's boilerplate about asynchronous reporting, never shown).
MAX_ERROR_TEXT = 300


@_says(HazardCode.CAPTURE_FAILED)
def _capture_failed(p: Params) -> str:
    message = (str(p.get("message") or "").strip().splitlines() or [""])[0]
    message = message if len(message) <= MAX_ERROR_TEXT else message[: MAX_ERROR_TEXT - 1] + "…"
    said = [message]
    for error in map(str, p.get("cuda_errors") or []):  # the chain's other CUDA errors, each once
        if not any(error in s for s in said):
            said.append(error)
    detail = f" ({', '.join(said[1:])})" if said[1:] else ""
    return f"capture failed: {p['exception']}: {message}{detail}"


@_says(HazardCode.UNJOINED_FORK)
def _unjoined(p: Params) -> str:
    failed = " (capture failed: cudaErrorStreamCaptureUnjoined)" if p.get("capture_says") else ""
    return f"`{p['code']}` forks work to a side stream that never rejoins the capturing stream{failed}"


def _scalar(value: Any) -> str:
    return significant(value, 4) if isinstance(value, float) and math.isfinite(value) else str(value)


@_says(HazardCode.FROZEN_SCALAR)
def _frozen_scalar(p: Params) -> str:
    shown = ", ".join(_scalar(v) for v in p["values"])
    more = f", … ({p['distinct']} distinct values)" if p["distinct"] > len(p["values"]) else ""
    msg = f"`{p['argument']}` is a Python number that changes between calls (seen {shown}{more})"
    outcome, found = p["outcome"], p.get("max_abs_diff")
    if outcome == "differed" and isinstance(found, (int, float)):
        shown_diff = f" (max |diff| {_max_diff(found)})" if p.get("diff_shown", True) else ""
        return msg + f"; the graph keeps the captured value {p['captured']!r}: replay differed from eager{shown_diff}"
    if outcome == "differed":
        return msg + "; replay differed from eager"
    if outcome == "matched":
        return msg + "; replay with a different value matched eager, so it may not reach a kernel, but the graph still keeps the captured value"
    return msg + "; the graph would keep the captured value"


@_says(HazardCode.REALLOCATED_ARGUMENTS)
def _reallocated(p: Params) -> str:
    names = ", ".join(f"`{a}`" for a in p["arguments"])
    one = len(p["arguments"]) == 1
    return (
        f"{names} {'is a new allocation' if one else 'are new allocations'} each call ({count(p['bytes'])} bytes); "
        f"launchprof copies {'it' if one else 'them'} into the static input buffers"
    )


@_says(HazardCode.REBOUND_STATE)
def _rebound(p: Params) -> str:
    msg = f"`{p['name']}` is rebound to a new tensor between calls: a graph keeps reading the memory captured the first time"
    if p.get("validation_differs"):
        msg += "; validation confirms replay differs from eager"
    if p.get("rebound_file") is not None:
        msg += f"; it is rebound at {p['rebound_file']}:{p['rebound_line']} (`{p['rebound_code']}`)"
    return msg


@_says(HazardCode.MUTATED_ARGUMENT)
def _mutated(p: Params) -> str:
    name = p["name"]
    return (
        f"the target changes `{name}` in place, but `{name}` is a new tensor each call and is copied into a "
        f"static buffer: under a hand-written graph the caller's `{name}` no longer changes"
    )


def _shapes(p: Params) -> list[str]:
    """Each argument's shapes as written: up to ``SHOWN_SHAPES``, then how many there are."""
    dims, ndims = list(p["shape_dims"]), list(p["shape_ndims"])
    out, at, shape_no = [], 0, 0
    for argument, distinct in zip(p["arguments"], p["shape_counts"], strict=True):
        written = []
        for _ in range(min(distinct, SHOWN_SHAPES)):
            n = ndims[shape_no]
            written.append("x".join(str(d) for d in dims[at : at + n]))
            at, shape_no = at + n, shape_no + 1
        more = f", … ({distinct} shapes)" if distinct > SHOWN_SHAPES else ""
        out.append(f"`{argument}`: {', '.join(written)}{more}")
    return out


SHOWN_SHAPES = 6  # distinct shapes named per argument


@_says(HazardCode.DYNAMIC_SHAPE)
def _dynamic_shape(p: Params) -> str:
    fallbacks = p.get("fallbacks") or 0
    tail = f"; {fallbacks} calls did not match the captured shape and ran eagerly" if fallbacks else ""
    return "argument shapes vary between calls (" + "; ".join(_shapes(p)) + ")" + tail


@_says(HazardCode.KERNEL_SEQUENCE_DIFFERS)
def _kernel_sequence(p: Params) -> str:
    counts = " vs ".join(str(n) for n in p["kernel_counts"])
    return f"the kernel sequence differs between calls ({counts} kernels): only the branch taken during capture would replay"


@_says(HazardCode.OP_SEQUENCE_DIFFERS)
def _op_sequence(p: Params) -> str:
    counts = " vs ".join(str(n) for n in p["op_counts"])
    return f"the sequence of PyTorch ops differs between calls ({counts} ops): only the branch taken during capture would replay"


@_says(HazardCode.FOREIGN_RNG)
def _foreign_rng(p: Params) -> str:
    what = p.get("what")
    return f"{what if what is not None else 'random draw'} inside the target: replay repeats the numbers drawn at capture"


@_says(HazardCode.HOST_SIDE_EFFECT)
def _side_effect(p: Params) -> str:
    what = p.get("what")
    if p.get("code"):
        return f"{what if what is not None else 'host work'} (`{p['code']}`) runs once at capture, never on replay"
    return f"{what} runs once at capture, never on replay"


@_says(HazardCode.REPLAY_MISMATCH)
def _replay_mismatch(p: Params) -> str:
    found = p.get("max_abs_diff")
    if found is not None:
        size = f" (max |diff| {_max_diff(found)})" if p.get("diff_shown", True) else ""
    else:
        size = f" ({p['why'] if p.get('why') is not None else 'values differ'})"
    return (
        f"replay differs from eager on {p['differing']} of {p['compared']} compared calls{size}; "
        f"the first is call {p['first_call']}, in {p['output']}"
    )


def _race_stream(p: Params, who: str) -> str:
    """The calling stream, or a side stream by its variable, else by its number (never its raw id)."""
    if p[f"{who}_on_origin"]:
        return "the calling stream"
    name, number = p.get(f"{who}_stream_name"), p.get(f"{who}_stream_number")
    return f"side stream `{name}`" if name else f"side stream {number}" if number else "a side stream"


def _stream_argument(p: Params, who: str) -> str:
    """What ``wait_stream(...)`` is given: the variable when known, else a placeholder."""
    name = p.get(f"{who}_stream_name")
    return str(name) if name and not p[f"{who}_on_origin"] else f"<{_race_stream(p, who)}>"


def _race_where(p: Params, who: str) -> str:
    line = p[f"{who}_line"]
    at = f"line {line}" if line else "an unknown line"
    code = p.get(f"{who}_code")
    return f"`{code}` ({at})" if code else at


@_says(HazardCode.STREAM_RACE)
def _stream_race(p: Params) -> str:
    verb = "writes" if p["other_type"] == "write" else "reads"
    msg = (
        f"{_race_where(p, 'other')} {verb} memory on {_race_stream(p, 'other')} that {_race_where(p, 'write')} writes on "
        f"{_race_stream(p, 'write')}, with nothing ordering the two"
    )
    confirmed = p.get("graph_confirms")
    if confirmed:
        msg += "; the captured graph has no edge between them either, so every replay races"
    elif confirmed is False:
        msg += " (the captured graph happens to order every node, but eager runs race)"
    return msg


def race_fix(p: Params) -> str:
    """The wait that orders a race's two accesses, written for the later access's line."""
    reader, writer = _race_stream(p, "later"), _race_stream(p, "earlier")
    at = f"line {p['later_line']}" if p["later_line"] else "the access"
    after = f" after line {p['earlier_line']}" if p["earlier_line"] else ""
    return (
        f"before {at}, make {reader} wait for {writer}: `torch.cuda.current_stream().wait_stream({_stream_argument(p, 'earlier')})` "
        f"there, or record an event on {writer}{after} and `wait_event` it before {at}"
    )


_HOLDERS = {"attribute": "an attribute of", "variable": "a variable in"}


@_says(HazardCode.KEPT_OUTPUT)
def _kept_output(p: Params) -> str:
    kind, name, calls = p["holder_kind"], p["output"], p["calls"]
    where = f"`{p['holder']}` ({_HOLDERS.get(kind, f'a {kind} in')} `{p['scope']}`)"
    what = f"every step's `{name}`" if calls > 1 else f"a step's `{name}`"
    if p.get("view"):
        what += " (a view of it, which shares its memory)"
    share = p.get("share_us")
    cost = f"; about {number(share, 1)} µs per call (its share by bytes of the measured clone of all outputs)" if share is not None else ""
    fix = f"`{p['fix_code']}`" if p.get("fix_code") else f"`{p['fix_name']}.clone()` where `{p['holder']}` keeps it"
    return (
        f"{where} keeps {what} past the next call (seen on {calls} watched call{'s' if calls > 1 else ''}): under a CUDA "
        f"graph every kept entry aliases the same static output buffer, which the next replay overwrites. "
        f"Clone what you keep: {fix}{cost}"
    )


@_says(HazardCode.LOOP_BACK)
def _loop_back(p: Params) -> str:
    arg, name, copy, nbytes = p["argument"], p["output"], p.get("copy_us"), p.get("bytes")
    same = "is the" if p.get("same_object") else "has the same contents as the"
    size = f"{count(nbytes)} bytes" if isinstance(nbytes, int) else "its bytes"
    saving = (
        f"copying it into the static input costs about {number(copy, 1)} µs per call ({size}, measured alone)"
        if isinstance(copy, (int, float))
        else f"a graph copies it into the static input every call ({size})"
    )
    return (
        f"`{arg}` of each call {same} `{name}` the previous call returned: the state loops back, and {saving}. "
        f"Write the step for it: keep the state in a static buffer that the captured step updates in place "
        f"(`{arg}_static.copy_({name}_new)` at its end) and pass `{arg}_static` every call: no copy-in, no clone"
    )


@_says(HazardCode.UNCAPTURED_COLLECTIVE)
def _uncaptured(p: Params) -> str:
    names = ", ".join(f"`{short_name(n)}` x{c}" for n, c in zip(p["kernels"], p["counts"], strict=True))
    side = p["side_streams"]  # raw profiler stream ids: data only, never said
    where = (
        f"issued on {'a side stream' if len(side) == 1 else f'{len(side)} side streams'} that never joined the capture"
        if side
        else "issued on the step's own stream, yet not in the graph"
    )
    return (
        f"rank {p['rank']}: {p['missing']} of {p['collectives']} collective(s) of the eager step are missing from the captured graph "
        f"({names}), {where}: a replay on this rank skips them while the other ranks wait in them"
    )


def _runs(name: Any) -> str:
    return f"`{short_name(name)}`" if name is not None else "nothing (its step ends)"


@_says(HazardCode.COLLECTIVE_DIVERGENCE)
def _divergence(p: Params) -> str:
    what, base, other = p["sequence"], p["base"], p["other"]
    consequence = (
        "collectives are matched by order across ranks, so a replay (and this eager step) would deadlock or mix up data"
        if what == "collective"
        else "a graph captured on each rank replays a different step on each; a branch taken on one rank only is the usual cause"
    )
    return (
        f"ranks {base} and {other} run different {what} sequences per step ({p['base_count']} vs {p['other_count']} {what}s): "
        f"first difference at {what} {p['position']}, rank {base} runs {_runs(p['base_runs'])}, rank {other} runs "
        f"{_runs(p['other_runs'])}; {consequence}"
    )
