"""``--save-trace``: the run's profiler traces as Chrome trace JSON for Perfetto and chrome://tracing.

The run file keeps the eager and replay traces gzipped (``Run.trace``); this writes them
out plain, with process and thread names so the viewers label the host and each CUDA
stream, and with the phase range (``launchprof/eager`` around the eager trace's calls,
``launchprof/replay`` around the replay's). The worker records those ranges itself with
``record_function``; a run recorded before it did gets the range drawn over the span of
its ``launchprof/callN`` ranges, marked ``"derived": true``. The capture is not profiled
(a profiler would inflate the capture and instantiate times the report gives), so
``launchprof/capture`` exists only as an NVTX range, for Nsight Systems.

A destination ending in ``.json`` is a file and gets the eager trace (the old behaviour of
``--save-trace``); anything else is a folder that gets every trace, ``trace-WHAT.json``.
A run whose worker ran no profiler on the target (worker/profiler_choice.py) holds no trace:
exporting from it is a usage error that says how to record one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchprof.errors import UsageError
from launchprof.fileio.output_files import write_output

if TYPE_CHECKING:  # analyze checks --save-trace before its worker starts; runs are read after
    from launchprof.run.file import Run

PHASE_OF = {"eager": "launchprof/eager", "replay": "launchprof/replay"}
ORDER = ("eager", "replay", "whole-script")


def is_file_destination(dest: Path) -> bool:
    return dest.suffix.lower() == ".json"


def check_destination(dest: Path) -> None:
    """A usage error (exit 2) before anything runs: the parent of a file, or the folder's
    parent, must exist, and a file destination must not be a folder."""
    # os.path's tests, not Path's: they answer False where the OS refuses to look (Python <3.14 raises)
    if is_file_destination(dest) and os.path.isdir(dest):
        raise UsageError(f"--save-trace {dest} is a folder; give a folder without .json or a file path")
    if not is_file_destination(dest) and os.path.exists(dest) and not os.path.isdir(dest):
        raise UsageError(f"--save-trace {dest} is a file; give a folder, or a path ending in .json for the eager trace")
    if not os.path.isdir(dest.parent):
        raise UsageError(f"folder for --save-trace does not exist: {dest.parent}")


def _span(events: list[dict[str, Any]]) -> tuple[float, float] | None:
    calls = [e for e in events if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("launchprof/call")]
    if not calls:
        return None
    start = min(float(e["ts"]) for e in calls)
    end = max(float(e["ts"]) + float(e.get("dur", 0.0)) for e in calls)
    return start, end


def with_phase_range(trace: dict[str, Any], what: str) -> dict[str, Any]:
    """The trace with its phase range present (recorded, else derived from the calls)."""
    name = PHASE_OF.get(what)
    events = list(trace.get("traceEvents", []))
    if name is None or any(e.get("name") == name for e in events):
        return {**trace, "traceEvents": events}
    span = _span(events)
    if span is None:
        return {**trace, "traceEvents": events}
    first = next(e for e in events if str(e.get("name", "")).startswith("launchprof/call"))
    events.append(
        {
            "ph": "X", "cat": "user_annotation", "name": name, "pid": first.get("pid", 0), "tid": first.get("tid", 0),
            "ts": span[0], "dur": span[1] - span[0], "args": {"derived": True},
        }
    )
    return {**trace, "traceEvents": events}


def with_names(trace: dict[str, Any], what: str) -> dict[str, Any]:
    """Metadata rows naming the processes (host, GPU) and each CUDA stream's thread, unless
    the trace has its own (the profiler's full export does)."""
    events = list(trace.get("traceEvents", []))
    if any(e.get("ph") == "M" and e.get("name") == "process_name" for e in events):
        return {**trace, "traceEvents": events}
    gpu = {(e.get("pid"), e.get("tid")) for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    host = {e.get("pid") for e in events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) not in gpu}
    meta: list[dict[str, Any]] = []
    for pid in sorted({p for p, _ in gpu} | host, key=str):
        label = f"launchprof {what}: " + ("host and GPU" if pid in host and pid in {p for p, _ in gpu} else "GPU" if pid not in host else "host")
        meta.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}})
    for pid, tid in sorted(gpu, key=str):
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"CUDA stream {tid}"}})
    return {**trace, "traceEvents": meta + events}


def chrome_trace(run: Run, what: str) -> dict[str, Any] | None:
    """The viewer-ready trace recorded as ``what``, or None when the run holds none."""
    trace = run.trace(what)
    if trace is None:
        return None
    return with_names(with_phase_range(trace, what), what)


def recorded_without_profiler(run: Run) -> bool:
    """The worker chose to run no profiler on the target (its ``profiler-plan`` events), so the
    run holds no trace; runs recorded before those events say nothing of it."""
    plans = [e for e in run.events if e.get("type") == "profiler-plan"]
    return bool(plans) and not any(e.get("profiled") for e in plans) and not run.header.traces


def export_traces(run: Run, dest: Path) -> list[Path]:
    """Write the run's traces to ``dest`` (a folder, or a ``.json`` file for the eager one)."""
    check_destination(dest)
    if recorded_without_profiler(run):
        raise UsageError(f"--save-trace: {run.path or 'the run'} was recorded without the profiler: analyze again with --kernels or --save-trace")
    kept = [w for w in ORDER if w in run.header.traces] + sorted(set(run.header.traces) - set(ORDER))
    if is_file_destination(dest):
        kept = [w for w in ("eager", "whole-script") if w in kept][:1]
        targets = {w: dest for w in kept}
    else:
        try:
            dest.mkdir(exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create the trace folder {dest}: {exc.strerror or exc}") from None
        targets = {w: dest / f"trace-{w}.json" for w in kept}
    written = []
    for what, path in targets.items():
        trace = chrome_trace(run, what)
        if trace is not None:
            try:
                write_output(path, json.dumps(trace, separators=(",", ":")))
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
            written.append(path)
    return written
