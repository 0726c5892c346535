"""Stopping the script once the measurement is complete.

The plan needs about 40 calls of the target (``plan_size``); the rest of a long script (an
hour of training) would measure nothing more. Once every target's plan has closed, the next
call of a target runs the stream check, which slows every later CUDA op of the process and so
waits for this point (worker/race_check.py), then raises ``ScriptDone`` (worker/script.py)
instead of calling the function: the script's ``finally`` blocks and context managers run,
and the worker writes its last events and exits 0. ``--run-to-end`` lets the script run to
its end, with the stream check after it.

It is raised once: a script that catches it goes on, its calls run the function untouched,
and its end is reported like any other. Only on the main thread: a SystemExit raised on
another thread ends that thread silently, and the script could wait for it for ever.

Every rank of a distributed script must stop at the same call, or one waits for ever in a
collective the others never issue. Where the worker runs under ``--nproc-per-node``, or the
script has a process group of two ranks or more, the ranks agree (worker/rank_sync.py) at
every call from ``plan_size`` calls on: that count is the same on every rank and known before
the first call, so every rank makes each agreement whatever its own plan's state, and all
of them stop at the first call where none is still measuring. A rank whose plan closed early
(a failed capture) waits for that call; one whose plan runs longer keeps the others going.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import NoteCode
from launchprof.worker import rank_sync
from launchprof.worker.config import WorkerConfig, plan_size
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.plan_phases import Phase
from launchprof.worker.script import ScriptDone

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

# Seconds a stopped script's process may take to exit after its last event: threads the script
# would have ended after its loop must not keep the worker (and analyze) waiting.
EXIT_GRACE_S = 30.0


class EarlyStop:
    """The stop shared by every target of one script: ``before_call`` from each target's
    wrapper, before the call runs. ``agreement`` and ``grouped`` are worker/rank_sync.py's,
    given here so that ranks can be simulated."""

    def __init__(
        self,
        runs: list[TargetRun],
        config: WorkerConfig,
        events: EventWriter,
        agreement: Callable[[], rank_sync.Agree | None] = rank_sync.agreement,
        grouped: Callable[[], bool] = rank_sync.distributed,
    ) -> None:
        self.runs = runs
        self.events = events
        self.ranks = config.ranks > 0
        self.agree_from = plan_size(config)  # the same on every rank
        self.agreement, self.grouped = agreement, grouped
        self.agree: rank_sync.Agree | None = None
        self.asked = False  # whether ``agreement`` was asked for ``agree``
        self.calls = 0  # the script's calls of its targets (launchprof's own calls of the step not counted)
        self.spent = config.run_to_end  # no stop (any more)
        self.checking = False  # the stream check's own call of the step runs
        self.stopped_after: int | None = None
        self.calls_after_stop = 0  # calls a script that caught the stop made after it
        self.pid = os.getpid()  # a forked child (a Pool worker) inherits this object: never stopped

    def before_call(self) -> None:
        """Raise ``ScriptDone`` where the script stops: every plan closed (and, with ranks,
        every rank's), the stream check run."""
        if self.stopped_after is not None and not self.checking:
            self.calls_after_stop += 1
        if self.spent or self.checking or any(run.busy for run in self.runs) or os.getpid() != self.pid:
            return
        if not on_main_thread():
            return
        index, self.calls = self.calls, self.calls + 1
        if not self._ready(index):
            return
        self.spent = True
        self.checking = True
        try:
            stream_checks(self.runs, self.events)
        finally:
            self.checking = False
        self.stopped_after = index
        raise ScriptDone()

    def _ready(self, index: int) -> bool:
        measured = bool(self.runs) and all(run.phase is Phase.DONE for run in self.runs)
        if index < self.agree_from and not measured:
            return False
        if not (self.ranks or self.grouped()):
            return measured
        if index < self.agree_from:  # with ranks, none agrees before every rank does
            return False
        agree = self._agree()
        if agree is None:  # ranks with no process group to agree through run to their end
            return False
        try:
            return not agree(not measured)  # True on every rank while any rank still measures
        except Exception as exc:
            self.spent = True
            self.events.write(NoteEvent(code=NoteCode.STOP_NOT_AGREED, params={"error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
            return False

    def _agree(self) -> rank_sync.Agree | None:
        if not self.asked:
            self.asked = True
            self.agree = self.agreement()
        return self.agree


def on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def stream_checks(runs: list[TargetRun], events: EventWriter) -> None:
    """Each run's stream check (``TargetRun.final_checks``); a failure is a note."""
    for run in runs:
        try:
            run.final_checks()
        except Exception as exc:
            events.write(NoteEvent(code=NoteCode.STREAM_CHECK_FAILED, params={"error": str(exc)}))


def exit_soon(grace_s: float) -> None:
    """End the process ``grace_s`` seconds from now if it is still there: after a stop, the
    script's own threads that only its end would stop (a non-daemon loop) could keep it
    alive. Its ``atexit`` handlers and the joins at exit have that long to run."""

    def leave() -> None:
        time.sleep(grace_s)
        with contextlib.suppress(Exception):
            sys.stderr.write(f"launchprof: the stopped script was still running {grace_s:g} s after its stop: its process ends here\n")
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)

    threading.Thread(target=leave, name="launchprof-exit", daemon=True).start()
