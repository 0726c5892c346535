"""No target: the whole script profiled eagerly (kernels, gaps, sync sites).

Used until a function marked ``@launchprof.target`` appears, which then takes over with
its own measurement plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launchprof.worker.config import WorkerConfig
from launchprof.worker.cupti import tear_down_after_profiling
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.profiler_tables import Timeline, new_profile, read_timeline, write_table
from launchprof.events.lifecycle_events import CandidateRow, CandidatesEvent, NoteEvent
from launchprof.model.findings import NoteCode
from launchprof.events.observation_events import ProbeEntry, ProbeEvent
from launchprof.events.timing_events import TraceEvent


class WholeScript:
    """No target: profile the whole script eagerly (kernels, gaps, sync sites)."""

    def __init__(self, config: WorkerConfig, events: EventWriter) -> None:
        self.config = config
        self.events = events
        self.prof: Any = None
        self.warnings_ctx: Any = None

    def start(self) -> None:
        import warnings

        import torch

        from launchprof.worker.probe import sync_entry

        self.syncs: list[dict[str, Any]] = []

        def on_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
            if "synchroniz" not in str(message):
                return
            entry = sync_entry(str(message), None, {})
            if entry is not None and len(self.syncs) < 500:
                self.syncs.append(entry)

        self.warnings_ctx = warnings.catch_warnings()
        self.warnings_ctx.__enter__()
        warnings.simplefilter("always")
        warnings.showwarning = on_warning
        torch.cuda.set_sync_debug_mode("warn")
        # with_stack: Python calls become events, so kernels can be charged to user functions
        # (launchprof.worker.candidates); it slows the host side of this overview run.
        self.prof = new_profile(with_stack=True)
        self.prof.__enter__()

    def stop(self, decorated: bool) -> None:
        import torch

        from launchprof.worker.frames import snippet

        torch.cuda.set_sync_debug_mode(0)  # before our own synchronize, which must not count
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        if self.warnings_ctx is not None:
            self.warnings_ctx.__exit__(None, None, None)
            self.warnings_ctx = None
        if decorated:  # a marked target takes over; its own plan profiles it
            if self.prof is not None:
                # Tear CUPTI down at this stop, as at the plan's own: a session that ends
                # subscribed followed by one that ends with teardown recorded no kernels at all
                # (frozen_scalar: "0 eager kernels" for a 2-node graph).
                # The plan's first profiler writes the note if teardown is not in force.
                tear_down_after_profiling()
                self.prof.__exit__(None, None, None)
                self.prof = None
            return
        # Deduplicate: one sync site is one finding, however often it ran.
        seen: dict[tuple[Any, Any], dict[str, Any]] = {}
        for s in self.syncs:
            key = (s.get("file"), s.get("line"))
            if key not in seen:
                s["count"] = 0
                if s.get("file") and s.get("line"):
                    s["snippet"] = snippet(s["file"], int(s["line"]))
                seen[key] = s
            seen[key]["count"] += 1
        self.events.write(ProbeEvent(index=None, syncs=[ProbeEntry(**s) for s in seen.values()]))
        if self.prof is not None:
            self.prof.__exit__(None, None, None)
            table = read_timeline(self.prof)  # read once: the table and the ranking share it
            path = write_table(self.prof, Path(self.config.events_path).parent, "whole-script", table)
            self.events.write(TraceEvent(path=path, calls=1, what="whole-script"))
            self.write_candidates(table)

    def write_candidates(self, table: Timeline | None = None) -> None:
        """The ``candidates`` event: user functions with the most kernels per call."""
        import os

        from launchprof.worker.candidates import candidate_rows, candidates, kernel_launches, tally, user_file_resolver

        script = Path(self.config.script)
        shown = os.path.relpath(script)
        try:
            is_user_file = user_file_resolver(str(script.parent))
            trace = candidate_rows(self.prof, Path(self.config.events_path).parent, table, is_user_file)
            counts = tally(trace, is_user_file, kernel_launches(trace))
            rows = candidates(counts, shown if not shown.startswith("..") else str(script))
        except Exception as exc:  # an overview extra: never lose the run over it
            self.events.write(NoteEvent(code=NoteCode.CANDIDATES_NOT_RANKED, params={"error": f"{type(exc).__name__}: {exc}"}))
            return
        self.events.write(CandidatesEvent(functions=[CandidateRow(**r) for r in rows]))
