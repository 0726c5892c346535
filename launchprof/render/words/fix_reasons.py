"""Why no fix was written for a line (``FixCode.CANNOT``'s ``reason``): each
:class:`~launchprof.model.findings.FixReason` in words, one specific sentence, which
``launchprof.render.words.fix_text`` puts in the fix's note."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchprof.model.findings import FixReason

Params = dict[str, Any]
REASONS: dict[str, Callable[[Params], str]] = {}


def line_list(lines: list[Any]) -> str:
    """``16 and 20``, ``16, 18 and 20``."""
    items = [str(n) for n in lines]
    return " and ".join(items) if len(items) < 3 else f"{', '.join(items[:-1])} and {items[-1]}"


def code_names(names: list[Any]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def reason(code: FixReason) -> Callable[[Callable[[Params], str]], Callable[[Params], str]]:
    def register(write: Callable[[Params], str]) -> Callable[[Params], str]:
        REASONS[code.value] = write
        return write

    return register


@reason(FixReason.NONE)
def _no_reason(p: Params) -> str:
    return ""


@reason(FixReason.NO_LINE)
def _no_line(p: Params) -> str:
    return "no line in the user's code to rewrite"


@reason(FixReason.READ_ERROR)
def _read_error(p: Params) -> str:
    return f"{p['error']} while reading it"


@reason(FixReason.LONGER_STATEMENT)
def _longer_statement(p: Params) -> str:
    return "the line is part of a longer statement"


@reason(FixReason.NOT_PLAIN_FORK)
def _not_plain_fork(p: Params) -> str:
    return "the fork on this line is not a plain wait_stream/wait_event call"


@reason(FixReason.NO_MASK)
def _no_mask(p: Params) -> str:
    return "no nonzero or boolean mask on it that launchprof can rewrite"


@reason(FixReason.NO_COPY_CALL)
def _no_copy_call(p: Params) -> str:
    return "no .cuda()/.to()/copy_ on it that launchprof can rewrite"


@reason(FixReason.REBINDING_IN_STATEMENT)
def _rebinding_in_statement(p: Params) -> str:
    return "the rebinding is part of a longer statement"


@reason(FixReason.NOT_PLAIN_ASSIGNMENT)
def _not_plain_assignment(p: Params) -> str:
    return "not a plain assignment"


@reason(FixReason.NO_HOST_READ)
def _no_host_read(p: Params) -> str:
    return "no .item()/.cpu()/.tolist()/float() on it that launchprof can rewrite"


@reason(FixReason.ARGUMENT_UNNAMED)
def _argument_unnamed(p: Params) -> str:
    return "the argument is not named"


@reason(FixReason.NAME_NOT_ON_LINE)
def _name_not_on_line(p: Params) -> str:
    return f"`{p['name']}` is not on this line"


@reason(FixReason.TENSOR_LOOP)
def _tensor_loop(p: Params) -> str:
    return "a loop whose trip count depends on a tensor has no fixed kernel sequence: bound it by a fixed count"


@reason(FixReason.NO_IF)
def _no_if(p: Params) -> str:
    return "no `if` statement on this line"


@reason(FixReason.SEVERAL_NAMES)
def _several_names(p: Params) -> str:
    return "the branches assign several names; pass them through torch.cond as a tuple"


@reason(FixReason.IN_LIBRARY)
def _in_library(p: Params) -> str:
    where = str(p["library"]).replace("\\", "/")
    for folder in ("site-packages/", "dist-packages/"):  # the package's own path says which package
        where = where.rsplit(folder, 1)[-1]
    return f"it happens inside the library code this line calls, at {where}; change what this line passes or calls"


@reason(FixReason.HOST_VALUE_USED)
def _host_value_used(p: Params) -> str:
    return (
        f"line {p['use_line']} uses `{p['name']}` as a Python number, which a device value cannot be: "
        "rewrite that line on the device too (or move it out of the step), then drop the read here"
    )


@reason(FixReason.SHAPES_VARY)
def _shapes_vary(p: Params) -> str:
    return "the shapes vary between calls, so the fix is a graph per shape bucket, set up by the caller, not a change to this line"


@reason(FixReason.KEPT_NOT_APPEND)
def _kept_not_append(p: Params) -> str:
    return f"`{p['holder']}` keeps the output other than by one append on this line: clone it where it is stored"


@reason(FixReason.EFFECTS_READ_LOCALS)
def _effects_read_locals(p: Params) -> str:
    return (
        f"lines {line_list(p['lines'])} depend on each other and read {code_names(p['names'])}, computed in the step: "
        "return those from the step and move the lines to the caller together"
    )


@reason(FixReason.RACE_STREAMS_UNNAMED)
def _race_streams_unnamed(p: Params) -> str:
    return "the earlier access is not inside a `with torch.cuda.stream(...)` block of another stream, which would name the stream to wait for"


@reason(FixReason.NO_CAUSE_FOUND)
def _no_cause_found(p: Params) -> str:
    return "launchprof found no frozen state behind the mismatch that it could name; the rule below says what to look for"


@reason(FixReason.NOT_MOVABLE_EFFECT)
def _not_movable_effect(p: Params) -> str:
    return "the effect is not a counter, an append or a print that launchprof can move to the caller"


@reason(FixReason.NO_HOST_RNG_CALL)
def _no_host_rng_call(p: Params) -> str:
    return "no numpy random draw on it that launchprof can rewrite as a draw on the device"
