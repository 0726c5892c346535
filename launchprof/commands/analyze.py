"""``launchprof analyze``: run the script in a worker, save the run, analyse it, render it.

Order of checks is part of the contract: usage errors (exit 2) are found before the
environment is looked at (exit 4), and a failing script (exit 3) still gets its report.
The report always comes from the saved run file (``load_run -> analyse``), the same path
``report`` and ``compare`` take, so what ``analyze`` prints is what they will re-derive.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from launchprof.commands import warm_worker
from launchprof.commands.analyze_ranks import check_rank_gpus, check_ranks, run_ranks_analysis
from launchprof.commands.analyze_steps import import_analysis_meanwhile, load_device_profile, save_run
from launchprof.commands.checks import check_compare, check_output_creatable, check_project_root, check_script, check_target_defined
from launchprof.commands.worker_config import worker_config
from launchprof.errors import EnvironmentProblem, ExitCode, FailOnTriggered, InternalError, UsageError
from launchprof.commands.failon import check_choice, fail_reason
from launchprof.fileio.output_files import Output, plan_outputs, refuse_overwriting, terminal_width
from launchprof.commands.progress import AnalyzeProgress
from launchprof.common.project import find_project_root, relative_to_root
from launchprof.render import RenderOptions
from launchprof.commands.worker_runner import WorkerResult, run_worker
from launchprof.common.targets import check_target_statically, parse_target
from launchprof.commands.trace_export import check_destination, export_traces
from launchprof.worker.config import WORKER_ENV_EXIT, WorkerConfig

if TYPE_CHECKING:  # the run's reader, the analysis and the renderers load while the worker runs
    from launchprof.run.evidence import Evidence

NO_GPU_HELP = "lint, report and compare work without a GPU"


@dataclass(frozen=True)
class AnalyzeOptions:
    script: Path
    script_args: tuple[str, ...] = ()
    target: str | None = None
    formats: tuple[str, ...] = ()
    outputs: tuple[Path, ...] = ()
    fail_on: str = "never"
    repeat: int = 50
    timeout: float | None = None
    run_to_end: bool = False  # --run-to-end: no stop once the measurement is complete
    profile: Path | None = None
    show_output: bool = True
    quiet: bool = False
    locate_async: bool = False
    calibrate: bool = True  # --no-calibrate: no quick device profile when none is cached
    explain: bool = False
    save_trace: Path | None = None
    kernels: bool = False  # --kernels: torch.profiler on the eager calls whatever the plan needs
    project_root: Path | None = None
    github: bool = False
    run_out: Path | None = None
    snippet: bool = False  # --snippet: the capture snippet in the terminal
    buckets: str | None = None  # --buckets 1,2,4,8: the user's capture sizes
    bucket_memory: str = "2GiB"  # --bucket-memory: the shared pool's limit
    nproc_per_node: int | None = None  # --nproc-per-node: N ranks under torch's launcher (launchprof.commands.analyze_ranks)
    compare: tuple[str, ...] = ()  # --compare compile
    compile_timeout: float = 300.0
    compile_rounds: int = 1  # --compile-rounds: compiles of each mode (dynamo reset each time)


def check_usage(options: AnalyzeOptions) -> list[Output]:
    """Every usage error (exit 2), before anything runs or the environment is looked at."""
    source = check_script(options.script)
    if options.target is not None and not options.target.strip():
        raise UsageError("--target '' names nothing: give the step's name (step, model.forward, Net.forward or pkg.mod:fn), or leave --target out")
    if options.target:
        spec = parse_target(options.target)
        check_target_statically(spec, options.script, source)
        check_target_defined(spec, options.script, source)
    check_choice(options.fail_on)
    bucket_options(options)
    check_compare(options.compare, options.compile_rounds, options.compile_timeout)
    inputs = [options.script, *filter(None, [options.profile])]
    outputs = plan_outputs(list(options.formats), list(options.outputs), inputs=inputs)  # each -o proved writable
    for flag, path in (("--save-trace", options.save_trace), ("--run-out", options.run_out)):
        if path is not None and not os.path.isdir(path.parent):
            raise UsageError(f"folder for {flag} does not exist: {path.parent}")
    if options.run_out is not None:
        if os.path.isdir(options.run_out):
            raise UsageError(f"--run-out {options.run_out} is a folder; give a file path (NAME.lprun)")
        refuse_overwriting(options.run_out, inputs, [o.path for o in outputs if o.path is not None], flag="--run-out")
    if options.save_trace is not None:
        check_destination(options.save_trace)
        check_output_creatable(options.save_trace)
    check_project_root(options.project_root)
    check_ranks(options)
    if options.profile is not None:
        from launchprof.crossover.profile import load_profile

        load_profile(options.profile)  # a missing or malformed profile fails now, not after the run
    return outputs


def bucket_options(options: AnalyzeOptions) -> dict[str, Any]:
    """--buckets and --bucket-memory as the worker takes them; a bad value is a usage error."""
    from launchprof.common.bucket_rule import parse_bytes, parse_sizes

    try:
        sizes = parse_sizes(options.buckets) if options.buckets is not None else None
        return {"buckets": sizes, "bucket_memory": parse_bytes(options.bucket_memory)}
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def measure(options: AnalyzeOptions, console: Console, report_on_stdout: bool = False) -> tuple[WorkerResult, Path]:
    rundir = Path(tempfile.mkdtemp(prefix="launchprof-"))
    try:
        config = worker_config(
            options, rundir, **bucket_options(options), compare=tuple(options.compare), compile_timeout=options.compile_timeout,
            compile_rounds=options.compile_rounds,
        )
        with AnalyzeProgress(console, repeat=options.repeat, has_target=True, stops=not options.run_to_end) as progress:
            result = run_worker(
                config, rundir, options.timeout, options.show_output, progress.update, output_to_stderr=report_on_stdout, waiting=warm_worker.take()
            )
    except BaseException:
        shutil.rmtree(rundir, ignore_errors=True)  # no result names it: nobody would ever remove it
        raise
    return result, rundir


def locate_async(options: AnalyzeOptions, root: Path, result: WorkerResult, evidence: Evidence, console: Console) -> None:
    """``--locate-async``: re-run the script in a new worker with CUDA_LAUNCH_BLOCKING=1, where
    an asynchronous CUDA error surfaces at the launching line, and add that line to the run."""
    from launchprof.analysis.failure import async_exception, located_note
    from launchprof.events.record import event_dict
    from launchprof.run.evidence import parse_events

    if async_exception(evidence) is None:
        console.print("[dim]launchprof: --locate-async: the script raised no asynchronous CUDA error; nothing to locate[/]")
        return
    console.print("[yellow]launchprof: --locate-async: re-running the script with CUDA_LAUNCH_BLOCKING=1 (its side effects run twice)[/]")
    rundir = Path(tempfile.mkdtemp(prefix="launchprof-locate-"))
    try:
        config = WorkerConfig(
            script=str(options.script.resolve()),
            script_args=list(options.script_args),
            target=None,
            events_path=str(rundir / "events.jsonl"),
            trace_path=str(rundir / "trace.json"),
            calibrate=False,
        )
        again = run_worker(config, rundir, options.timeout, options.show_output, extra_env={"CUDA_LAUNCH_BLOCKING": "1"})
        end = parse_events(again.events).script_end
    finally:
        shutil.rmtree(rundir, ignore_errors=True)
    found = end.exception if end is not None and end.status == "exception" else None
    if found and found.file:
        found = dataclasses.replace(found, file=relative_to_root(found.file, root))
    note = event_dict(located_note(found))
    result.events.append({**note, "t": result.events[-1].get("t") if result.events else None})


def check_environment(result: WorkerResult, evidence: Evidence) -> None:
    if result.interrupted and evidence.machine is None:
        # Ctrl-C before CUDA was up: a torch import cut short reads as a broken install
        raise KeyboardInterrupt
    if evidence.environment_problem:
        raise EnvironmentProblem(f"{evidence.environment_problem}; {NO_GPU_HELP}")
    if result.returncode == WORKER_ENV_EXIT:
        raise EnvironmentProblem(f"the worker could not start CUDA; {NO_GPU_HELP}")
    if evidence.target_problem:
        raise UsageError(evidence.target_problem)


def run(options: AnalyzeOptions) -> int:
    console = Console(stderr=True, width=terminal_width())
    outputs = check_usage(options)
    if options.nproc_per_node:
        check_rank_gpus(options.nproc_per_node)
        return run_ranks_analysis(options, outputs)
    root = find_project_root(options.script, options.project_root)
    meanwhile = import_analysis_meanwhile(o.format for o in outputs)
    result, rundir = measure(options, console, any(o.path is None and o.format != "text" for o in outputs))
    meanwhile.join()  # the modules below are imported by then, and nothing imports them twice at once
    failed = False
    try:
        from launchprof.analysis import analyse
        from launchprof.analysis.runinfo import script_failed
        from launchprof.commands.emit import emit
        from launchprof.run import load_run
        from launchprof.run.evidence import parse_events

        try:
            evidence = parse_events(result.events)
        except ValueError as exc:
            raise InternalError(f"the worker wrote a malformed event: {exc}") from None
        check_environment(result, evidence)
        failed = script_failed(evidence, {"timed_out": result.timed_out})
        if options.locate_async:
            locate_async(options, root, result, evidence, console)
        profile = load_device_profile(options.profile, evidence.machine, console)
        run_path = save_run(options, root, result, rundir, evidence, profile)
    finally:
        # The script's hidden output is kept (and named below) only when the script failed.
        if not (failed and result.log_path is not None and result.log_path.exists()):
            shutil.rmtree(rundir, ignore_errors=True)
    loaded = load_run(run_path)
    if options.save_trace is not None:
        for saved in export_traces(loaded, options.save_trace):
            console.print(f"[dim]trace saved: {saved}[/]", soft_wrap=True)
    report = analyse(loaded, profile)
    render = RenderOptions(project_root=root, device_profile=profile, explain=options.explain, snippet=options.snippet)
    emit(report, outputs, render, github=options.github)
    console.print(f"[dim]run saved: {run_path}[/]", soft_wrap=True)
    return exit_code(report, evidence, result, options, console)


def exit_code(report: Any, evidence: Evidence, result: WorkerResult, options: AnalyzeOptions, console: Console) -> int:
    if evidence.internal_error:
        raise InternalError(f"launchprof failed while measuring ({evidence.internal_error}); the report holds what was measured before")
    from launchprof.analysis.runinfo import script_failed

    worker = {"timed_out": result.timed_out}
    if report.run is not None and report.run.cause is not None and script_failed(evidence, worker):
        if result.log_path and result.log_path.exists():
            console.print(f"[dim]script output: {result.log_path}[/]", soft_wrap=True)
        if result.interrupted:  # the user's stop, not the script's failure; the report said what it holds
            console.print("[bold yellow]launchprof: interrupted[/]")
            return int(ExitCode.INTERRUPTED)
        console.print(f"[bold red]launchprof: the script failed:[/] {escape(report.run.cause)}")  # a cause may hold "[/...]"
        return int(ExitCode.SCRIPT)
    if result.interrupted:
        return int(ExitCode.INTERRUPTED)
    if evidence.target is not None and evidence.target_calls == 0:
        raise UsageError(
            f"the target {evidence.target.name} was never called: the script ran to its end without calling it (check --target)"
        )
    reason = fail_reason(report, options.fail_on)
    if reason:
        raise FailOnTriggered(reason)
    return int(ExitCode.OK)

