"""``launchprof analyze``: run the script in a worker, build the report, render it.

Order of checks is part of the contract: usage errors (exit 2) are found before the
environment is looked at (exit 4), and a failing script (exit 3) still gets its report.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from launchprof.analysis import build_report
from launchprof.commands.emit import emit
from launchprof.errors import EnvironmentProblem, ExitCode, FailOnTriggered, InternalError, UsageError
from launchprof.evidence import parse_events
from launchprof.failon import check_choice, fail_reason
from launchprof.outputs import plan_outputs
from launchprof.progress import AnalyzeProgress
from launchprof.render import RenderOptions
from launchprof.runner import run_worker
from launchprof.targets import check_target_statically, parse_target
from launchprof.worker.config import WORKER_ENV_EXIT, WorkerConfig

NO_GPU_HELP = "lint, report and compare work without a GPU"


@dataclass(frozen=True)
class AnalyzeOptions:
    script: Path
    script_args: tuple[str, ...] = ()
    target: str | None = None
    formats: tuple[str, ...] = ()
    outputs: tuple[Path, ...] = ()
    fail_on: str = "never"
    repeat: int = 25
    timeout: float | None = None
    profile: Path | None = None
    show_output: bool = False
    save_trace: Path | None = None
    source_root: Path | None = None
    github: bool = False


def check_script(path: Path) -> str:
    if not path.exists():
        raise UsageError(f"script not found: {path}")
    if path.is_dir():
        raise UsageError(f"{path} is a folder: give the Python script to run")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    try:
        ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    return source


def load_device_profile(path: Path | None, machine: dict[str, Any] | None, console: Console) -> Any:
    """The crossover profile, for predictions: --profile, else the cached one for this GPU."""
    from launchprof.crossover import profile as device_profile
    from launchprof.session import Machine

    m = Machine(**machine) if machine else None
    try:
        if path is not None:
            loaded = device_profile.load_profile(path, m)
        elif m is not None:
            loaded = device_profile.find_cached_profile(m)
        else:
            return None
    except UsageError:
        raise
    except Exception as exc:
        console.print(f"[yellow]launchprof: device profile not used: {exc}[/]")
        return None
    if loaded is None:
        return None
    for warning in loaded.warnings:
        console.print(f"[yellow]launchprof: warning: {warning}[/]")
    return loaded.profile


def run(options: AnalyzeOptions) -> int:
    console = Console(stderr=True)
    # --- usage errors first (exit 2) ---------------------------------------------------
    source = check_script(options.script)
    spec = parse_target(options.target) if options.target else None
    if spec is not None:
        check_target_statically(spec, options.script, source)
    check_choice(options.fail_on)
    outputs = plan_outputs(list(options.formats), list(options.outputs))
    if options.save_trace is not None and not options.save_trace.parent.is_dir():
        raise UsageError(f"folder for --save-trace does not exist: {options.save_trace.parent}")
    if options.profile is not None:
        from launchprof.crossover.profile import load_profile

        load_profile(options.profile)  # a missing or malformed profile fails now, not after the run

    # --- run the worker ------------------------------------------------------------------
    rundir = Path(tempfile.mkdtemp(prefix="launchprof-"))
    config = WorkerConfig(
        script=str(options.script.resolve()),
        script_args=list(options.script_args),
        target=options.target,
        events_path=str(rundir / "events.jsonl"),
        trace_path=str(rundir / "trace.json"),
        repeat=options.repeat,
    )
    progress = AnalyzeProgress(console, repeat=options.repeat, has_target=True)
    with progress:
        result = run_worker(config, rundir, options.timeout, options.show_output, progress.update)
    evidence = parse_events(result.events)
    keep = os.environ.get("LAUNCHPROF_KEEP_RUN")
    if keep:
        shutil.copytree(rundir, keep, dirs_exist_ok=True)

    if evidence.environment_problem:
        shutil.rmtree(rundir, ignore_errors=True)
        raise EnvironmentProblem(f"{evidence.environment_problem}; {NO_GPU_HELP}")
    if result.returncode == WORKER_ENV_EXIT:
        raise EnvironmentProblem(f"the worker could not start CUDA; {NO_GPU_HELP}")
    if evidence.target_problem:
        shutil.rmtree(rundir, ignore_errors=True)
        raise UsageError(evidence.target_problem)

    worker = {
        "returncode": result.returncode,
        "timed_out": result.timed_out,
        "interrupted": result.interrupted,
        "wall_s": round(result.wall_s, 3),
        "timeout": options.timeout,
    }
    profile = load_device_profile(options.profile, evidence.machine, console)
    report = build_report(evidence, str(options.script), options.target, worker, options.repeat, profile)
    trace = evidence.traces.get("eager") or evidence.traces.get("whole-script")
    if options.save_trace is not None and trace and Path(trace).exists():
        shutil.copyfile(trace, options.save_trace)
    emit(report, outputs, RenderOptions(source_root=options.source_root, device_profile=profile.to_dict() if profile else None), github=options.github)

    if evidence.internal_error:
        shutil.rmtree(rundir, ignore_errors=True)
        raise InternalError(f"launchprof failed while measuring ({evidence.internal_error}); the report holds what was measured before")
    script_failed = report.run is not None and report.run.cause is not None and (
        result.timed_out or (evidence.script_end or {}).get("status") in ("exception", "exit") or not evidence.script_end
    )
    if script_failed:
        if result.log_path and result.log_path.exists():
            console.print(f"[dim]script output: {result.log_path}[/]")
        else:
            shutil.rmtree(rundir, ignore_errors=True)
        console.print(f"[bold red]launchprof: the script failed:[/] {report.run.cause}")
        return int(ExitCode.INTERRUPTED if result.interrupted else ExitCode.SCRIPT)
    shutil.rmtree(rundir, ignore_errors=True)
    if result.interrupted:
        return int(ExitCode.INTERRUPTED)
    if evidence.target is not None and evidence.target_calls == 0:
        raise UsageError(
            f"the target {evidence.target.get('name')} was never called: the script ran to its end without calling it (check --target)"
        )
    reason = fail_reason(report, options.fail_on)
    if reason:
        raise FailOnTriggered(reason)
    return int(ExitCode.OK)
