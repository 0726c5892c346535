"""The measurement plan as a state machine: its phases, why a phase ends, and where it goes.

``TargetRun`` (worker/plan.py) runs one handler per call of the target for the phase it is
in, and changes phase only through ``TRANSITIONS`` (or ``finish``, from any phase to DONE,
when the script ends or launchprof fails). Its class docstring gives this table with the
conditions; tests/test_plan_machine.py checks that the two agree.
"""

from __future__ import annotations

import enum


class Phase(enum.Enum):
    WARMUP = "warmup"
    EAGER = "eager"
    PROFILE = "profile"
    PROBE = "probe"
    CAPTURE = "capture"
    REPLAY = "replay"
    DONE = "done"


class Exit(enum.Enum):
    """Why a phase ends: what its handler saw on a call."""

    CALLS_MADE = "calls made"  # the phase made the calls it counts
    TRACE_LOST = "trace lost"  # the profiled calls' trace lost all GPU activity (worker/cupti.py)
    CAPTURED = "captured"
    CAPTURE_FAILED = "capture failed"
    COMPLETE = "complete"  # the replay phase has all it needs
    STUCK = "stuck"  # the replay phase gave up waiting for calls the graph can serve


# (phase, why it ends) -> the phase that follows.
TRANSITIONS: dict[tuple[Phase, Exit], Phase] = {
    (Phase.WARMUP, Exit.CALLS_MADE): Phase.EAGER,
    (Phase.EAGER, Exit.CALLS_MADE): Phase.PROFILE,
    (Phase.PROFILE, Exit.CALLS_MADE): Phase.PROBE,
    (Phase.PROFILE, Exit.TRACE_LOST): Phase.PROFILE,
    (Phase.PROBE, Exit.CALLS_MADE): Phase.CAPTURE,
    (Phase.CAPTURE, Exit.CAPTURED): Phase.REPLAY,
    (Phase.CAPTURE, Exit.CAPTURE_FAILED): Phase.DONE,
    (Phase.REPLAY, Exit.COMPLETE): Phase.DONE,
    (Phase.REPLAY, Exit.STUCK): Phase.DONE,
}

# The plan-end reason written when a transition closes the plan.
FINISH_REASONS: dict[Exit, str] = {
    Exit.CAPTURE_FAILED: "capture failed",
    Exit.COMPLETE: "complete",
    Exit.STUCK: "replay phase could not collect enough matching calls",
}
# The plan-end reason when launchprof stopped the script: its extra calls changed state that
# could not be put back (worker/plan_state.py; the state-lost note names it).
STOPPED_REASON = "launchprof stopped the script: its extra calls changed state that could not be put back"
