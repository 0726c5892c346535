"""Trying each written fix on the user's own calls before the report shows it as a fix.

After the bursts, the worker writes the fixes the report will show, from its own event log
with the report's own rules (``launchprof.hazards.fixes.fixes_to_try``: the one import of the
analysis the worker makes, so the fix tried is the fix shown). Each distinct fix whose change
lies inside a function the step ran is applied to a copy of that function
(worker/fix_patch.py), captured, replayed on the recorded argument sets and compared leaf by
leaf with the original's eager result from the same state (worker/validator.py), then timed
against the original's eager calls. Everything the calls can reach is saved first and put back
after (worker/plan_state.py), the original function is back in place, and prints are silenced:
the script carries on as `python script.py` would. One ``fix-trial`` event per distinct fix.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import NoteCode
from launchprof.model.fix_scope import TrialReason, fix_key, scope_reason
from launchprof.worker.fix_patch import NotPatchable, find_holder
from launchprof.worker.fix_trial_run import TrialResult, run_trial

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

# The trials' total wall time: a few seconds, counted in analyze's own time.
BUDGET_S = 4.0


def read_events(path: str) -> list[dict[str, Any]]:
    """The worker's own event log so far (it is flushed after every event)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    return out


def ran_functions(events: list[dict[str, Any]]) -> set[str]:
    """The names of the user functions the probed call ran (the probe event's ``functions``)."""
    probes = [e for e in events if e.get("type") == "probe"]
    functions = probes[-1].get("functions") or [] if probes else []
    return {str(f.get("function") or "").split(".")[-1] for f in functions if isinstance(f, dict)}


def try_fixes(run: TargetRun) -> None:
    """One ``fix-trial`` event per distinct fix the report will show that can be tried; a
    failure of launchprof's own becomes a note, never an exception into the script."""
    sets = list(run.replay_sets if run.captured is not None else run.eager_sets)
    try:
        from launchprof.hazards.fixes.fixes_to_try import fixes_to_try  # the one allowed edge (tests/test_layout.py)

        events = read_events(run.config.events_path)
        fixes = fixes_to_try(events)
    except Exception as exc:
        run.events.write(NoteEvent(code=NoteCode.FIX_TRIALS_FAILED, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        return
    ran = ran_functions(events)
    start = time.perf_counter()
    seen: set[tuple[str, int, str]] = set()
    busy, run.busy = run.busy, True  # a call of the target during the trials runs it untouched
    try:
        for kind, fix in fixes:
            key = fix_key(fix.file, fix.line, fix.after)
            if key in seen or scope_reason(fix) is not TrialReason.NONE:
                continue
            seen.add(key)
            run.events.write(_tried(run, fix, sets, ran, time.perf_counter() - start).event(fix, kind))
    except Exception as exc:  # inside the user's call of the target: never raise into their script
        run.events.write(NoteEvent(code=NoteCode.FIX_TRIALS_FAILED, params={"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
    finally:
        run.busy = busy


def _tried(run: TargetRun, fix: Any, sets: list[tuple[tuple, dict]], ran: set[str], spent: float) -> TrialResult:
    """The trial's result, or why there was none; launchprof's own error is the result's."""
    reason = _why_not(run, sets, spent)
    if reason is not TrialReason.NONE:
        return TrialResult(reason=reason)
    try:
        return _trial(run, fix, sets, ran, BUDGET_S - spent)
    except Exception as exc:
        return TrialResult(reason=TrialReason.TRIAL_ERROR, error=f"{type(exc).__name__}: {str(exc)[:200]}")


def _why_not(run: TargetRun, sets: list[tuple[tuple, dict]], spent: float) -> TrialReason:
    if run.config.ranks:
        return TrialReason.RANKS
    if not torch.cuda.is_available():
        return TrialReason.NO_GPU
    if not sets:
        return TrialReason.NO_CALLS
    if spent >= BUDGET_S:
        return TrialReason.BUDGET
    return TrialReason.NONE


def _trial(run: TargetRun, fix: Any, sets: list[tuple[tuple, dict]], ran: set[str], budget_s: float) -> TrialResult:
    from launchprof.worker.fix_patch import compile_patched, patch_of, trial_callable

    t0 = time.perf_counter()
    try:
        patch = patch_of(str(fix.file), int(fix.line), fix.before, fix.after, fix.indent)
        holder = find_holder(patch, run.fn, lambda fn: not ran or fn.__name__ in ran)
        new = compile_patched(holder, patch)
    except NotPatchable as exc:
        return TrialResult(reason=exc.reason, error=str(exc) if exc.reason is TrialReason.NOT_COMPILED else None)
    result = run_trial(run, holder, new, trial_callable(holder, new, run.fn), sets, budget_s)
    result.function = getattr(holder.fn, "__qualname__", None)
    result.trial_us = (time.perf_counter() - t0) * 1e6
    return result

