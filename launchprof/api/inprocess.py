"""``launchprof.analyze``: the worker's measurement, run on a live function in this process.

A function object cannot be sent to a worker process, so the API drives the worker's own
plan (:class:`launchprof.worker.plan.TargetRun`) here: it calls the plan as many times as
the plan needs (``plan_size``), writing the same events into a temporary run folder, packs
them into a run file and analyses that file exactly as ``launchprof analyze`` does. Only the
process boundary differs, and with it one consequence: a sticky CUDA error (a device-side
assert, an illegal address) inside the function poisons this process's CUDA context, so it
ends the caller's process too, where the CLI would only lose its worker.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchprof.errors import EnvironmentProblem, ScriptFailed
from launchprof.run.header import run_header
from launchprof.model.core import Report
from launchprof.run.header_records import WorkerOutcome
from launchprof.common.project import find_project_root
from launchprof.worker.config import WorkerConfig, plan_size

if TYPE_CHECKING:
    from launchprof.crossover.profile import DeviceProfile

Call = tuple[tuple[Any, ...], dict[str, Any]]

NO_CUDA = "launchprof.analyze and launchprof.check need a CUDA device: {problem} (lint, report and compare work without a GPU)"
# The plan may ask for more calls than plan_size (fallbacks, extra validations when a
# scalar changes); past this many times plan_size it is closed as it stands.
EXTRA_CALLS_FACTOR = 3
# PyTorch's CUDA sanitizer, once imported, leaves GPU trace hooks on that slow every later
# CUDA op of the process (a 60-op step timed 669 µs in a plain loop before
# launchprof.analyze and 903-944 µs after it). The CLI runs it in its worker after the
# script ends; in the caller's own process it waits to be asked for.
STREAM_CHECK_SKIPPED = (
    "in-process it would slow every later CUDA op of this process (PyTorch's sanitizer hooks cannot be "
    "switched off): pass stream_check=True, or run `launchprof analyze` on the script"
)


@dataclasses.dataclass(frozen=True)
class PlanSettings:
    """How much to measure: the CLI's defaults for ``analyze``, fewer timed calls for ``check``."""

    repeat: int = 50
    warmup: int = 3
    profile_calls: int = 3
    validations: int = 4
    calibrate: bool = True
    stream_check: bool = False


def source_of(fn: Callable[..., Any]) -> tuple[str, int | None]:
    """The file and first line of ``fn`` (unwrapping decorators and bound methods)."""
    target = inspect.unwrap(getattr(fn, "__func__", fn))
    code = getattr(target, "__code__", None) or getattr(getattr(target, "forward", None), "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    try:
        return inspect.getfile(target), None
    except TypeError:
        return "<unknown>", None


def require_cuda() -> None:
    """Raise EnvironmentProblem (exit code 4) unless torch imports and a CUDA device starts."""
    from launchprof.worker.__main__ import cuda_problem

    problem = cuda_problem()
    if problem is not None:
        raise EnvironmentProblem(NO_CUDA.format(problem=problem))


def observed_calls(args: tuple[Any, ...], kwargs: dict[str, Any], calls: Sequence[Call] | None) -> list[Call]:
    """The calls to feed the plan, in order (cycled when the plan needs more)."""
    if calls is None:
        return [(tuple(args), dict(kwargs))]
    out: list[Call] = []
    for i, pair in enumerate(calls):
        try:
            call_args, call_kwargs = pair
        except (TypeError, ValueError):
            raise TypeError(f"calls[{i}] must be an (args, kwargs) pair, got {type(pair).__name__}") from None
        out.append((tuple(call_args), dict(call_kwargs or {})))
    if not out:
        raise ValueError("calls is empty: give at least one (args, kwargs) pair")
    return out


def drive(run: Any, calls: list[Call], needed: int) -> int:
    """Call the plan until it is done (or the call cap is hit); returns the calls made.

    The user's exceptions pass through unchanged, as they would from the function."""
    from launchprof.worker.plan import Phase

    made = 0
    while run.phase is not Phase.DONE and made < needed * EXTRA_CALLS_FACTOR:
        call_args, call_kwargs = calls[made % len(calls)]
        made += 1
        run(*call_args, **call_kwargs)
    return made


def _record(fn: Callable[..., Any], calls: list[Call], settings: PlanSettings, rundir: Path, root: Path) -> tuple[BaseException | None, float]:
    """Run the worker's steps in this process, writing events into ``rundir``."""
    from launchprof.model.machine import collect_machine
    from launchprof.worker import frames
    from launchprof.worker.calibration import calibrate
    from launchprof.worker.cupti import TEARDOWN_CUPTI
    from launchprof.worker.event_writer import EventWriter
    from launchprof.events.capture_events import RaceCheckEvent
    from launchprof.events.lifecycle_events import MachineEvent, NoteEvent, ScriptEndEvent, WorkerEndEvent
    from launchprof.model.findings import NoteCode
    from launchprof.worker.hook import _describe
    from launchprof.worker.script import exception_record
    from launchprof.worker.plan import TargetRun

    t0 = time.perf_counter()
    file, _ = source_of(fn)
    name = getattr(fn, "__qualname__", type(fn).__name__)
    config = WorkerConfig(
        script=file, script_args=[], target=name, events_path=str(rundir / "events.jsonl"),
        trace_path=str(rundir / "trace.json"), repeat=settings.repeat, warmup=settings.warmup,
        profile_calls=settings.profile_calls, validations=settings.validations, calibrate=settings.calibrate,
    )
    events = EventWriter(config.events_path)
    machine = dataclasses.asdict(collect_machine())
    events.write(MachineEvent(machine=machine, import_s=0.0, pid=os.getpid()))
    if "torch.cuda._sanitizer" in sys.modules:
        events.write(NoteEvent(code=NoteCode.SANITIZER_IMPORTED))
    if settings.calibrate:
        calibrate(machine, events)
    events.write(_describe(fn, name))
    added_root = str(root) + os.sep
    frames.SCRIPT_ROOT.append(added_root)
    run = TargetRun(fn, name, config, events)
    failure: BaseException | None = None
    teardown_before = os.environ.get(TEARDOWN_CUPTI)  # the plan may set it: the caller's process gets it back
    try:
        drive(run, calls, plan_size(config))
    except Exception as exc:
        failure = exc
    finally:
        try:
            run.finish(reason="the calls ended before the measurement plan completed")
            if settings.stream_check:
                run.final_checks()
            else:
                events.write(RaceCheckEvent(status="skipped", reason=STREAM_CHECK_SKIPPED))
        except Exception as exc:
            events.write(NoteEvent(code=NoteCode.MEASUREMENT_NOT_CLOSED, params={"error": str(exc)}))
        frames.SCRIPT_ROOT.remove(added_root)
        if teardown_before is None:
            os.environ.pop(TEARDOWN_CUPTI, None)
    if failure is None:
        events.write(ScriptEndEvent(status="ok", exit_code=0, exception=None, calls=run.calls))
    else:
        events.write(ScriptEndEvent(status="exception", exit_code=1, exception=exception_record(failure), calls=run.calls))
    wall = time.perf_counter() - t0
    events.write(WorkerEndEvent(wall_s=wall))
    events.close()
    return failure, wall


def pack(rundir: Path, fn: Callable[..., Any], root: Path, settings: PlanSettings, wall_s: float, out: Path, profile: DeviceProfile | None = None) -> Path:
    """The run folder -> a ``.lprun`` file, the same format the CLI saves. Without a given
    profile, the one cached for this machine is used and stored, as ``analyze`` does."""
    from launchprof.run.evidence import parse_events
    from launchprof.run import write_run

    events = [json.loads(line) for line in (rundir / "events.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    evidence = parse_events(events)
    traces = {what: rundir / p for what, p in evidence.traces.items() if p and (rundir / p).is_file()}
    worker = WorkerOutcome(returncode=0, wall_s=round(wall_s, 3))
    header = run_header(source_of(fn)[0], getattr(fn, "__qualname__", None), root, worker, settings.repeat, machine=evidence.machine)
    if profile is None:  # found as analyze finds it (analysis.load.choose_profile)
        from launchprof.analysis.load import choose_profile

        chosen = choose_profile(header.machine)
        profile = chosen.profile if chosen is not None else None
    return write_run(header, events, traces, out, profile=profile.to_dict() if profile is not None else None)


def measure(
    fn: Callable[..., Any], calls: list[Call], settings: PlanSettings, run_out: str | Path | None = None, profile: DeviceProfile | None = None
) -> Report:
    """Measure, pack, analyse. The user's exception becomes ScriptFailed carrying the report."""
    from launchprof.analysis import analyse
    from launchprof.analysis.load import stored_profile
    from launchprof.run import load_run

    if not callable(fn):
        raise TypeError(f"launchprof.analyze needs a function, got {type(fn).__name__}")
    require_cuda()
    root = find_project_root(source_of(fn)[0]) if Path(source_of(fn)[0]).exists() else Path.cwd()
    rundir = Path(tempfile.mkdtemp(prefix="launchprof-api-"))
    try:
        failure, wall = _record(fn, calls, settings, rundir, root)
        out = Path(run_out) if run_out is not None else rundir / "api.lprun"
        run = load_run(pack(rundir, fn, root, settings, wall, out, profile))
        report = analyse(run, profile if profile is not None else stored_profile(run.profile))
    finally:
        shutil.rmtree(rundir, ignore_errors=True)
    if run_out is None:
        report = dataclasses.replace(report, run_file=None)
    if failure is not None:
        error = ScriptFailed(f"the function raised {type(failure).__name__}: {failure}; what was measured before is in .report")
        error.report = report  # type: ignore[attr-defined]
        raise error from failure
    return report
