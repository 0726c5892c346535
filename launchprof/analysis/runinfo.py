"""How the measurement run went: complete or not, why it stopped, whether the script failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launchprof.analysis.timing import uses_bursts
from launchprof.evidence import Evidence
from launchprof.findings import Note, NoteCode, note
from launchprof.session import RunInfo


def script_failed(ev: Evidence, worker: dict[str, Any]) -> bool:
    """The user's script, not launchprof, ended the run: exception, exit, crash or timeout."""
    if ev.environment_problem:
        return False
    end = ev.script_end or {}
    return bool(worker.get("timed_out")) or end.get("status") in ("exception", "exit") or not end


def _cause(ev: Evidence, worker: dict[str, Any], needed: int, complete: bool) -> str | None:
    end = ev.script_end or {}
    if worker.get("interrupted"):
        return "interrupted (Ctrl-C): the report holds what was measured before"
    if worker.get("timed_out"):
        return f"stopped after the --timeout of {worker.get('timeout')} s"
    if ev.environment_problem:
        return ev.environment_problem
    if end.get("status") == "exception":
        exc = end.get("exception") or {}
        where = f" at {Path(exc['file']).name}:{exc['line']}" if exc.get("file") else ""
        return f"the script raised {exc.get('type')}: {exc.get('message')}{where}"
    if end.get("status") == "exit":
        return f"the script exited with status {end.get('exit_code')}"
    if not end:
        rc = worker.get("returncode")
        how = f"signal {-rc}" if isinstance(rc, int) and rc < 0 else f"exit status {rc}"
        return f"the script's process died ({how}) without finishing: a crash (segfault, abort, sticky CUDA error or the OOM killer)"
    if ev.target is not None and not complete:
        calls = ev.target_calls
        reason = (ev.plan_end or {}).get("reason", "")
        if calls == 0:
            return f"the target {(ev.target or {}).get('name')} was never called: the script ran to its end without calling it"
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
    ended = {e.get("kind"): int(e.get("samples") or 0) for e in ev.timing_ends}
    return uses_bursts(ev) and ended.get("eager", 0) > 0 and ended.get("replay", 0) > 0


def in_loop_short_note(ev: Evidence) -> Note | None:
    """Said where the in-loop phase fell short but the bursts measured both steps: the
    numbers are whole; what stopped was the replays inside the user's loop."""
    end = ev.plan_end or {}
    if end.get("reason") != IN_LOOP_SHORT or not bursts_complete(ev):
        return None
    return note(NoteCode.IN_LOOP_SHORT, replays_timed=end.get("replays_timed"), calls=end.get("calls"))


def run_info(ev: Evidence, worker: dict[str, Any], needed: int) -> RunInfo:
    end = ev.script_end or {}
    complete = bool(ev.plan_end and ev.plan_end.get("reason") in ("complete", "capture failed")) or (
        ev.target is None and end.get("status") == "ok"
    ) or (in_loop_short_note(ev) is not None and end.get("status") == "ok")
    cause = _cause(ev, worker, needed, complete)
    if worker.get("interrupted") or worker.get("timed_out"):
        complete = False
    phases = {}
    for a, b in zip(ev.phases, ev.phases[1:] + [{"t": (ev.worker_end or {}).get("wall_s") or 0}], strict=False):
        if a.get("name") and isinstance(b.get("t"), (int, float)) and isinstance(a.get("t"), (int, float)):
            phases[a["name"]] = round(float(b["t"]) - float(a["t"]), 3)
    return RunInfo(
        complete=complete,
        cause=cause,
        script_exit=end.get("exit_code"),
        target_calls=ev.target_calls,
        wall_s=worker.get("wall_s"),
        phases_s=phases,
    )
