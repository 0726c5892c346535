"""Worker entry point: ``python -m launchprof.worker CONFIG.json``.

Order matters: the event log is opened first, then torch is imported and CUDA checked
(an unusable environment is an event and exit 86, which the CLI maps to exit code 4),
then the script runs with the target hooked.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from pathlib import Path
from typing import Any

from launchprof.worker.config import WORKER_ENV_EXIT, WorkerConfig
from launchprof.worker.events import EventWriter


def main(argv: list[str]) -> int:
    config = WorkerConfig.from_file(Path(argv[0]))
    events = EventWriter(config.events_path)
    t_start = time.perf_counter()
    try:
        import torch
    except Exception as exc:
        events.write("environment", problem=f"torch cannot be imported: {type(exc).__name__}: {exc}")
        return WORKER_ENV_EXIT
    if not torch.cuda.is_available():
        events.write("environment", problem="no CUDA device is available (torch.cuda.is_available() is False)")
        return WORKER_ENV_EXIT
    try:
        torch.cuda.init()
    except Exception as exc:
        events.write("environment", problem=f"CUDA cannot be initialised: {exc}")
        return WORKER_ENV_EXIT

    from launchprof.machine import collect_machine
    from launchprof.targets import parse_target
    from launchprof.worker import frames
    from launchprof.worker.hook import Hook
    from launchprof.worker.measure import TargetRun
    from launchprof.worker.script import run_script

    events.write("machine", machine=dataclasses.asdict(collect_machine()), import_s=time.perf_counter() - t_start, pid=os.getpid())
    script = Path(config.script).resolve()
    frames.SCRIPT_ROOT.append(str(script.parent) + os.sep)
    runs: list[TargetRun] = []

    def make(fn: Any, name: str) -> Any:
        run = TargetRun(fn, name, config, events)
        runs.append(run)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return run(*args, **kwargs)

        return wrapper

    spec = parse_target(config.target) if config.target else None
    whole: WholeScript | None = None

    def on_decorated() -> None:
        # A function marked @launchprof.target appeared: measure it instead of the whole script.
        nonlocal whole
        if whole is not None:
            whole.stop(decorated=True)
            whole = None

    hook = Hook(spec, make, on_decorated)
    announced = False

    def on_statement(namespace: dict[str, Any]) -> None:
        nonlocal announced
        hook.try_globals(namespace)
        if hook.installed is not None and not announced:
            announced = True
            events.write("target", **hook.installed)

    if spec is None:
        hook.install_decorator()
    elif spec.module is not None:
        sys.path.insert(0, str(script.parent))
        hook.import_module_target()
        if hook.problem:
            events.write("target-problem", problem=hook.problem)
            return 2
        events.write("target", **(hook.installed or {}))
        announced = True

    if spec is None:
        whole = WholeScript(config, events)
        whole.start()
    outcome = None
    try:
        outcome = run_script(script, list(config.script_args), on_statement)
    finally:
        if whole is not None:
            whole.stop(decorated=False)
        for run in runs:
            try:
                run.finish(reason="the script ended before the measurement plan completed")
            except Exception as exc:
                events.write("note", text=f"could not close the measurement: {exc}")
    if hook.installed is not None and not announced:
        events.write("target", **hook.installed)
    if spec is not None and hook.installed is None:
        events.write("target-problem", problem=hook.problem or f"unknown target {spec.raw!r}: the script never defined it at module level")
    events.write("script-end", status=outcome.status, exit_code=outcome.exit_code, exception=outcome.exception, calls=sum(r.calls for r in runs))
    events.write("worker-end", wall_s=time.perf_counter() - t_start)
    events.close()
    return 0


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
        from torch.profiler import ProfilerActivity, profile

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
        self.prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
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
        self.events.write("probe", index=None, syncs=list(seen.values()), effects=[], rng=[], streams=[], functions=[])
        if self.prof is not None:
            self.prof.__exit__(None, None, None)
            self.prof.export_chrome_trace(self.config.trace_path)
            self.events.write("trace", path=self.config.trace_path, calls=1, what="whole-script")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
