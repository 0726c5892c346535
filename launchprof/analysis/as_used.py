"""``Report.speedup_as_used``: the speedup as the user's code would get it, with the output
clones that its kept outputs need.

JSON ``speedup`` is eager over copy-in + replay. A caller that keeps an output past the next
replay must clone it, and pays that clone on every call: this figure adds it to each replay
sample and goes through the very speedup function the report's ``speedup`` goes through
(analysis/timing.py, with the same between-process widening), so both intervals are drawn
alike.

What a clone adds inside the user's loop is not the clone timed alone: that call sits
between two device synchronisations, whose round trip the replay step already pays, and
goes through launchprof's walk of the output tree. On the H200 a 4 KB clone read 19.6 µs
timed alone while one eager op took 7.1 µs. A clone launched right after the replay costs
one eager op on the host per kept tensor; only a copy large enough to take longer on the
device than that (its byte share of the timed-alone clone, past three such ops) costs its
measured share.
"""

from __future__ import annotations

import dataclasses

from launchprof.analysis.timing import StepSamples, breakeven, speedup
from launchprof.model.kept_outputs import OutputsAdvice
from launchprof.model.step_timing import HostVariation, Speedup

METHOD = (
    "ratio of the eager step median and the replay step median with the clones the kept outputs need "
    "added to each replay (one eager op per kept tensor, or the clone's measured share when larger); "
    "interval as for the speedup"
)
LARGE_COPY_OPS = 3  # a timed-alone share past this many eager ops is the copy itself, not overhead


def clone_in_loop_us(outputs: OutputsAdvice | None, eager_op_us: float | None) -> float | None:
    """Per call, what the clones the user's code needs add in its loop; None when it needs none."""
    if outputs is None or not outputs.kept:
        return None
    tensors = len({k.output for k in outputs.kept})
    measured = outputs.clone_needed_us or None
    if eager_op_us is None or eager_op_us <= 0:
        return measured
    launches = tensors * eager_op_us
    if measured is not None and measured > LARGE_COPY_OPS * launches:
        return measured
    return launches


def speedup_as_used(
    eager: StepSamples, replay: StepSamples, clone_us: float | None, variation: HostVariation | None = None
) -> Speedup | None:
    """Eager over copy-in + replay + the needed clones; None when no clone is needed."""
    if clone_us is None:
        return None
    with_clone = dataclasses.replace(replay, samples=[s + clone_us for s in replay.samples])
    found = speedup(eager, with_clone, variation)
    return dataclasses.replace(found, method=METHOD) if found is not None else None


def payback_as_used(setup_us: float | None, eager_us: float, replay_us: float, clone_us: float | None) -> float | None:
    """Replays to win set-up back when each replay also pays the needed clones."""
    return breakeven(setup_us, eager_us, replay_us + (clone_us or 0.0))
