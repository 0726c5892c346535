"""``Report.speedup_as_used``: the speedup as the user's code would get it, with the output
clones that its kept outputs need (hazards/outputs.py: each kept output's share, by bytes,
of the clone of all outputs timed alone).

JSON ``speedup`` is eager over copy-in + replay. A caller that keeps an output past the next
replay must clone it, and pays that clone on every call: this figure adds it to each replay
sample and goes through the very speedup function the report's ``speedup`` goes through
(analysis/timing.py, model/stats.py), so both intervals are drawn, and widened, alike. The
clone is its timed median share: a memory copy, far steadier than the step around it.
"""

from __future__ import annotations

import dataclasses

from launchprof.analysis.timing import StepSamples, breakeven, speedup
from launchprof.model.kept_outputs import OutputsAdvice
from launchprof.model.step_timing import Speedup

METHOD = (
    "ratio of the eager step median and the replay step median with the output clones the kept outputs need "
    "added to each replay; 95% bootstrap interval as for the speedup"
)


def clone_needed_us(outputs: OutputsAdvice | None) -> float | None:
    """Per call, the clones the user's code needs; None when it needs none or they were not timed."""
    if outputs is None or not outputs.kept or not outputs.clone_needed_us:
        return None
    return outputs.clone_needed_us


def speedup_as_used(eager: StepSamples, replay: StepSamples, outputs: OutputsAdvice | None) -> Speedup | None:
    """Eager over copy-in + replay + the needed clones; None when no clone is needed."""
    clone = clone_needed_us(outputs)
    if clone is None:
        return None
    with_clone = dataclasses.replace(replay, samples=[s + clone for s in replay.samples])
    found = speedup(eager, with_clone)
    return dataclasses.replace(found, method=METHOD) if found is not None else None


def payback_as_used(setup_us: float | None, eager_us: float, replay_us: float, outputs: OutputsAdvice | None) -> float | None:
    """Replays to win set-up back when each replay also pays the needed clones."""
    return breakeven(setup_us, eager_us, replay_us + (clone_needed_us(outputs) or 0.0))
