"""How the measurement run went: complete or not, why it stopped, whether the script failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launchprof.analysis.timing import uses_bursts
from launchprof.events.lifecycle_events import ScriptException
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note
from launchprof.model.core import RunInfo


def script_failed(ev: Evidence, worker: dict[str, Any]) -> bool:
    """The user's script, not launchprof, ended the run: exception, exit, crash or timeout."""
    if ev.environment_problem:
        return False
    end = ev.script_end
    return bool(worker.get("timed_out")) or end is None or end.status in ("exception", "exit")


def _cause(ev: Evidence, worker: dict[str, Any], needed: int, complete: bool) -> str | None:
    end = ev.script_end
    if worker.get("interrupted"):
        return "interrupted (Ctrl-C): the report holds what was measured before"
    if worker.get("timed_out"):
        return f"stopped after the --timeout of {worker.get('timeout')} s"
    if ev.environment_problem:
        return ev.environment_problem
    if end is not None and end.status == "exception":
        exc = end.exception or ScriptException()
        where = f" at {Path(exc.file).name}:{exc.line}" if exc.file else ""
        return f"the script raised {exc.type}: {exc.message}{where}"
    if end is not None and end.status == "exit":
        return f"the script exited with status {end.exit_code}"
    if end is None:
        rc = worker.get("returncode")
        how = f"signal {-rc}" if isinstance(rc, int) and rc < 0 else f"exit status {rc}"
        return f"the script's process died ({how}) without finishing: a crash (segfault, abort, sticky CUDA error or the OOM killer)"
    if ev.target is not None and not complete:
        calls = ev.target_calls
        reason = (ev.plan_end.reason if ev.plan_end else None) or ""
        if calls == 0:
            return f"the target {ev.target.name} was never called: the script ran to its end without calling it"
        if calls < needed and "script ended" in reason:
            return f"the target was called {calls} times; a full measurement needs about {needed} (use --repeat to lower it)"
        if reason and reason != "complete":
            return reason
    return None


# The plan's reason (worker/plan.py, _maybe_done) when its in-loop replays could not match
# enough calls: a note, not a stop, once the bursts after it timed eager and replay in full.
IN_LOOP_SHORT = "replay phase could not collect enough matching calls"


def bursts_complete(ev: Evidence) -> bool:
    """The report's steps come from the bursts (:func:`uses_bursts`), and both kinds ran to
    their end (``timing-end`` with samples; a burst stopped by its time cap has its own
    note): the sample count follows --repeat."""
    ended = {e.kind: e.samples or 0 for e in ev.timing_ends}
    return uses_bursts(ev) and ended.get("eager", 0) > 0 and ended.get("replay", 0) > 0


def in_loop_short_note(ev: Evidence) -> Note | None:
    """Said where the in-loop phase fell short but the bursts measured both steps: the
    numbers are whole; what stopped was the replays inside the user's loop."""
    end = ev.plan_end
    if end is None or end.reason != IN_LOOP_SHORT or not bursts_complete(ev):
        return None
    return note(NoteCode.IN_LOOP_SHORT, replays_timed=end.replays_timed, calls=end.calls)


def stopped_after_calls(ev: Evidence) -> int | None:
    """The script's calls of the target before launchprof stopped it, its measurement complete
    (worker/early_stop.py); None where the script ended by itself."""
    end = ev.script_end
    return end.stopped_after_calls if end is not None and end.status == "done" else None


def stopped_note(ev: Evidence) -> Note | None:
    calls = stopped_after_calls(ev)
    return None if calls is None else note(NoteCode.STOPPED_WHEN_MEASURED, calls=calls)


def run_info(ev: Evidence, worker: dict[str, Any], needed: int) -> RunInfo:
    status = ev.script_end.status if ev.script_end else None
    complete = bool(ev.plan_end and ev.plan_end.reason in ("complete", "capture failed")) or (
        ev.target is None and status == "ok"
    ) or (in_loop_short_note(ev) is not None and status in ("ok", "done"))
    cause = _cause(ev, worker, needed, complete)
    if worker.get("interrupted") or worker.get("timed_out"):
        complete = False
    phases = {}
    ends = [p.t for p in ev.phases[1:]] + [(ev.worker_end.wall_s if ev.worker_end else None) or 0]
    for a, end_t in zip(ev.phases, ends, strict=False):
        if a.name and end_t is not None and a.t is not None:
            phases[a.name] = round(float(end_t) - float(a.t), 3)
    return RunInfo(
        complete=complete,
        cause=cause,
        script_exit=ev.script_end.exit_code if ev.script_end else None,
        target_calls=ev.target_calls,
        wall_s=worker.get("wall_s"),
        phases_s=phases,
        stopped_after_calls=stopped_after_calls(ev),
        interrupted=bool(worker.get("interrupted")),
    )
