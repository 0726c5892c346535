"""Worker entry point: ``python -m launchprof.worker CONFIG.json``, or ``--wait OUT ERR``
(``analyze``'s worker, started before the CLI parsed its options: it imports torch, then
reads the config path from standard input; launchprof/commands/warm_worker.py).

Order matters: the event log is opened first, then torch is imported (already, for a
waiting worker) and CUDA checked (an unusable environment is an event and exit 86, which
the CLI maps to exit code 4), then a quick device profile is measured if none is cached
(predictions need one), then the script runs with the target hooked.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from launchprof.ranks.worker_side import announce_rank, for_rank, use_rank_device
from launchprof.worker.config import WORKER_ENV_EXIT, WorkerConfig
from launchprof.worker.event_writer import EventWriter
from launchprof.events.lifecycle_events import EnvironmentEvent, MachineEvent, NoteEvent, ScriptEndEvent, TargetEvent, TargetProblemEvent, WorkerEndEvent
from launchprof.model.findings import NoteCode


def cuda_problem() -> str | None:
    """Import torch and start CUDA; the problem in one line, or None when CUDA is usable.
    The worker and the in-process API (launchprof.api) both ask this."""
    try:
        import torch
    except Exception as exc:
        return torch_import_problem(exc)
    if not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    try:
        torch.cuda.init()
    except Exception as exc:
        return f"CUDA cannot be initialised: {exc}"
    return None


def torch_import_problem(exc: Exception) -> str:
    return f"torch cannot be imported: {type(exc).__name__}: {exc}"


def start_cuda(events: EventWriter, problem: str | None = None) -> bool:
    """Start CUDA; a problem (``problem``: one found already) is an ``environment`` event."""
    problem = problem or cuda_problem()
    if problem is not None:
        events.write(EnvironmentEvent(problem=problem))
    return problem is None


def main(argv: list[str], probe: Any = None, torch_problem: str | None = None) -> int:
    config = for_rank(WorkerConfig.from_file(Path(argv[0])))
    events = EventWriter(config.events_path)
    announce_rank(config, events)
    t_start = time.perf_counter()
    from launchprof.model.machine import MachineProbe

    probe = probe or MachineProbe()  # the driver's query runs while torch imports
    if not start_cuda(events, torch_problem):
        return WORKER_ENV_EXIT
    use_rank_device(config)
    probe.read_device()  # and the device's, while the modules below import

    from launchprof.common.targets import parse_target
    from launchprof.worker import frames
    from launchprof.worker.calibration import calibrate
    from launchprof.worker.early_stop import EarlyStop
    from launchprof.worker.hook import Hook
    from launchprof.worker.plan import TargetRun
    from launchprof.worker.script import run_script
    from launchprof.worker.whole_script import WholeScript

    machine = dataclasses.asdict(probe.machine())
    events.write(MachineEvent(machine=machine, import_s=time.perf_counter() - t_start, pid=os.getpid()))
    if config.calibrate:
        calibrate(machine, events)
    script = Path(config.script).resolve()
    frames.SCRIPT_ROOT.append(str(script.parent) + os.sep)
    runs: list[TargetRun] = []
    stop = EarlyStop(runs, config, events)  # the script ends once every target is measured
    spec = parse_target(config.target) if config.target else None
    whole: list[WholeScript] = [WholeScript(config, events)] if spec is None else []

    def on_decorated() -> None:
        # A function marked @launchprof.target appeared: measure it instead of the whole script.
        if whole:
            whole.pop().stop(decorated=True)

    hook = Hook(spec, functools.partial(_measured, runs=runs, config=config, events=events, stop=stop), on_decorated)
    announced: list[bool] = [False]

    def on_statement(namespace: dict[str, Any]) -> None:
        hook.try_globals(namespace)
        if hook.installed is not None and not announced[0]:
            announced[0] = True
            events.write(hook.installed)

    if spec is None:
        hook.install_decorator()
    elif spec.module is not None:
        sys.path.insert(0, str(script.parent))
        hook.import_module_target()
        if hook.problem:
            events.write(TargetProblemEvent(problem=hook.problem))
            return 2
        events.write(hook.installed or TargetEvent())
        announced[0] = True

    for w in whole:
        w.start()
    outcome = None
    try:
        outcome = run_script(script, list(config.script_args), on_statement)
    finally:
        for w in whole:
            try:  # after a sticky CUDA error the profiler may fail: keep the script's outcome
                w.stop(decorated=False)
            except Exception as exc:
                events.write(NoteEvent(code=NoteCode.WHOLE_SCRIPT_PROFILE_LOST, params={"error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
        stop.spent = True  # the script is over: the stream check's own calls of a target never stop it
        _close_runs(runs, events)
    if hook.installed is not None and not announced[0]:
        events.write(hook.installed)
    if spec is not None and hook.installed is None:
        problem = hook.problem or f"unknown target {spec.raw!r}: the script never defined it at module level"
        events.write(TargetProblemEvent(problem=problem))
    _end(events, outcome, runs, stop, t_start)
    return 0


def _end(events: EventWriter, outcome: Any, runs: list[Any], stop: Any, t_start: float) -> None:
    """The last events; a script stopped once measured (``done``) says after how many calls,
    and its process may not linger (worker/early_stop.py)."""
    from launchprof.worker.early_stop import EXIT_GRACE_S, exit_soon

    calls = sum(r.calls for r in runs)
    # A stop the script caught and ended on (torch's @record returns on SystemExit(0)) is a stop too.
    done = outcome.status == "done" or (stop.stopped_after is not None and stop.calls_after_stop == 0)
    events.write(
        ScriptEndEvent(
            status=outcome.status, exit_code=outcome.exit_code, exception=outcome.exception, calls=calls,
            stopped_after_calls=stop.stopped_after if done else None,
        )
    )
    events.write(WorkerEndEvent(wall_s=time.perf_counter() - t_start))
    events.close()
    if done:
        exit_soon(EXIT_GRACE_S)


def _measured(fn: Any, name: str, runs: list[Any], config: WorkerConfig, events: EventWriter, stop: Any) -> Any:
    """The stand-in for the target: a plan that the user's calls drive, and the stop once
    every target is measured (worker/early_stop.py)."""
    from launchprof.worker.plan import TargetRun

    run = TargetRun(fn, name, config, events)
    run.keep.stop_on_lost = True  # the script stops rather than run on state launchprof could not put back
    runs.append(run)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stop.before_call()  # raises ScriptDone where the script stops
        return run(*args, **kwargs)

    return wrapper


def _close_runs(runs: list[Any], events: EventWriter) -> None:
    from launchprof.worker.early_stop import stream_checks

    for run in runs:
        run.keep.script_running = False  # state lost from here on is said, with no script left to stop
    for run in runs:
        try:
            run.finish(reason="the script ended before the measurement plan completed")
        except Exception as exc:
            events.write(NoteEvent(code=NoteCode.MEASUREMENT_NOT_CLOSED, params={"error": str(exc)}))
    stream_checks(runs, events)  # last of all: it slows the process (worker/race_check.py)


def main_when_told(kept_out: int, kept_err: int) -> int:
    """``--wait OUT ERR``: import torch, then run the config named on standard input
    (launchprof/commands/warm_worker.py); an empty line or a closed pipe ends here, with
    nothing of the user's run and nothing printed. Until then this process's output is
    held (worker/held_output.py); ``kept_out`` and ``kept_err`` are the CLI's own streams."""
    from launchprof.model.machine import MachineProbe
    from launchprof.worker.held_output import release

    probe = MachineProbe()
    problem = None
    try:
        import torch  # noqa: F401 - the slow part of the start, while the CLI checks its options
    except Exception as exc:  # said as main's own import would say it; imported again, it would print twice
        problem = torch_import_problem(exc)
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    told = json.loads(line)
    release(kept_out, kept_err, told["output"], told.get("log"))
    return main([told["config"]], probe, problem)


def entry(argv: list[str]) -> int:
    if argv[:1] == ["--wait"]:
        return main_when_told(int(argv[1]), int(argv[2]))
    return main(argv)


if __name__ == "__main__":
    sys.exit(entry(sys.argv[1:]))
