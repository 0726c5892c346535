"""Outputs the caller keeps past the next call, and outputs fed back as the next call's input.
"""

from __future__ import annotations

from launchprof.model.records import model


@model
class KeptOutput:
    output: str  # the output's path in what the target returns ("" for a lone tensor, "[0]")
    name: str  # the name the call site gives it (`logits`)
    holder: str  # the user's variable, container or attribute that keeps it (`history`)
    holder_kind: str  # list, dict, deque, set, tuple, variable, attribute
    scope: str | None  # the module (`__main__`) or function (`main()`) the holder lives in
    bytes: int | None
    clone_us: float | None  # this output's share, by bytes, of replay.clone_us
    calls: int  # watched calls whose output it kept


@model
class LoopBack:
    argument: str  # the argument of call N+1 ...
    output: str  # ... that is this output of call N
    name: str
    how: str  # "same-object" or "equal-contents"
    bytes: int | None
    copy_us: float | None  # copying it into a static buffer, timed alone: the per-call saving


@model
class OutputsAdvice:
    """Which output clones the user's own graph code needs, and what they cost per call."""

    kept: list[KeptOutput]
    loop_back: list[LoopBack]
    clone_needed_us: float | None  # clones of the kept outputs only, per call
    clone_all_us: float | None  # replay.clone_us: cloning every output, as launchprof does
    basis: str  # how clone_needed_us is derived
