"""The plan's side of leaving the user's script working: which tensors the step mutates
(seen during the warm-up calls and the probed call), saving everything the step can
reach before launchprof's extra calls, and what happens when something cannot be put back.

State the extra calls changed and that could not be put back is written as a
``state-lost`` note, and the plan stops the script at the end of the call in progress
(``TargetRun.__call__`` raises ``ScriptStopped``, worker/script.py): the report is complete
up to there, and the script never runs on state launchprof changed. Where the script has
already ended (the stream check) or the calls are launchprof's own (the in-process API),
the note is all. State that cannot be saved at all (worker/reach.py, ``Uncovered``) is said
once per run in a ``state-not-covered`` note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import NoteCode, RestoredAfter
from launchprof.worker.hoststate import HostState
from launchprof.worker.observe import bind_arguments
from launchprof.worker.plan_phases import STOPPED_REASON
from launchprof.worker.reach import Budget, reach
from launchprof.worker.saved_state import Lost, SavedState, changed_tensors, marked
from launchprof.worker.script import ScriptStopped
from launchprof.worker.state_roots import step_roots
from launchprof.worker.trees import tensor_leaves
from launchprof.worker.validator import mutated_tensors

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

MAX_NAMED = 8  # paths a note names; it counts the rest
BUDGET = Budget()  # the walk's limits (worker/reach.py)


@dataclass
class KeepState:
    """A run's record of the user's state: the paths of the tensors the step mutates, what
    could not be put back, whether that stops the script (the worker's script runs; not the
    in-process API, whose calls are its own), and whether the script is still running."""

    mutated_paths: set[str] = field(default_factory=set)
    lost: list[Lost] = field(default_factory=list)
    said_uncovered: bool = False
    stop_on_lost: bool = False
    script_running: bool = True


def stop_if_lost(run: TargetRun) -> None:
    """Stop the script where launchprof's extra calls changed state it could not put back:
    the plan is closed first, so the report is whole."""
    keep = run.keep
    if keep.lost and keep.stop_on_lost and keep.script_running and not run.busy:
        run.finish(reason=STOPPED_REASON)
        raise ScriptStopped()


def call_roots(run: TargetRun, sets: list[tuple[tuple, dict]]) -> list[tuple[str, Any]]:
    return step_roots(run.fn, [bind_arguments(run.fn, args, kwargs) for args, kwargs in sets])


class MutationWatch:
    """Tensors reachable before one of the user's calls, with their versions and checksums;
    ``after`` adds the paths of those the call changed in place to ``run.keep.mutated_paths``."""

    def __init__(self, run: TargetRun, args: tuple, kwargs: dict) -> None:
        self.run = run
        self.before = marked(reach(call_roots(run, [(args, kwargs)]), BUDGET).tensors)

    def after(self) -> None:
        self.run.keep.mutated_paths.update(changed_tensors(self.before))


def save(run: TargetRun, sets: list[tuple[tuple, dict]]) -> SavedState:
    """Everything the calls on ``sets`` can reach, and the probe's Python writes."""
    probe = HostState.save(run.host_writes, run.host_containers)
    extra = [(path, obj, kind) for path, obj, kind, _ in probe.holders]
    known: list[Any] = []  # what the warm-up calls saw mutated among the arguments and named state
    for args, kwargs in sets:
        named = tensor_leaves(run.inputs.canon(args, kwargs))
        known += mutated_tensors(named, run.mutated_args, run.state_of(args, kwargs), run.mutated_state)
    saved = SavedState.take(call_roots(run, sets), run.keep.mutated_paths, budget=BUDGET, extra=extra, also=known)
    if saved.uncovered and not run.keep.said_uncovered:
        run.keep.said_uncovered = True
        named = saved.uncovered[:MAX_NAMED]
        params = {"paths": [u.path for u in named], "whys": [u.why for u in named], "count": len(saved.uncovered)}
        run.events.write(NoteEvent(code=NoteCode.STATE_NOT_COVERED, params=params))
    return saved


def put_back(run: TargetRun, saved: SavedState, after: RestoredAfter) -> list[Lost]:
    """Restore ``saved``; what could not be restored is reported (``report_lost``)."""
    lost = saved.restore()
    if lost:
        report_lost(run, lost, after)
    return lost


def report_lost(run: TargetRun, lost: list[Lost], after: RestoredAfter) -> None:
    """The ``state-lost`` note; the script is stopped at the end of the call in progress
    where the run may stop it (``keep.stop_on_lost``). What was reported before is not
    again (the capture puts its state back twice)."""
    known = {(x.path, x.why) for x in run.keep.lost}
    lost = [x for x in lost if (x.path, x.why) not in known]
    if not lost:
        return
    named = lost[:MAX_NAMED]
    params = {
        "after": after.value,
        "paths": [x.path for x in named],
        "whys": [x.why for x in named],
        "count": len(lost),
        "stopped": bool(run.keep.stop_on_lost and run.keep.script_running),
    }
    run.events.write(NoteEvent(code=NoteCode.STATE_LOST, params=params))
    run.keep.lost += lost
