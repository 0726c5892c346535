"""``launchprof analyze --nproc-per-node N``: the script on N ranks under torch's launcher.

The same flow as one GPU (:mod:`launchprof.commands.analyze`), once per rank: each rank's
events become its own run file, ``NAME.rankN.lprun`` next to where the single-GPU run file
would go, and its own reports, ``REPORT.rankN.EXT`` next to each ``-o REPORT.EXT``; the
combined report (:mod:`launchprof.ranks.combine`) goes where ``-o`` says, and to the
terminal. A rank that fails does not lose the others: every rank's run is saved and
reported before the exit code is decided.

Exit codes as for one GPU, over all ranks: 4 when a rank found no usable CUDA (the
combined report names each rank's problem), 2 for a target problem, 3 when a rank's script
failed or its worker died or was stopped (130 for Ctrl-C), 1 for ``--fail-on`` on the
combined report.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from launchprof.commands.analyze_steps import import_analysis_meanwhile, load_device_profile, save_run
from launchprof.errors import EnvironmentProblem, ExitCode, FailOnTriggered, InternalError, UsageError
from launchprof.commands.failon import fail_reason
from launchprof.fileio.output_files import Output, terminal_width, write_output
from launchprof.commands.progress import AnalyzeProgress
from launchprof.common.project import find_project_root
from launchprof.ranks.rank_paths import rank_path
from launchprof.ranks.rank_runner import RankRun, RanksResult, run_ranks
from launchprof.render import RenderOptions, renderer_for
from launchprof.run import default_run_path, in_kept_runs, prune
from launchprof.commands.worker_config import worker_config

if TYPE_CHECKING:  # the run's reader, the analysis and the renderers load while the workers run
    from launchprof.crossover.profile import DeviceProfile
    from launchprof.model.core import Report
    from launchprof.ranks.combine import RankInput
    from launchprof.run.evidence import Evidence

NO_GPU_HELP = "lint, report and compare work without a GPU"
WORKER = "launchprof.worker"


def measure_ranks(options: Any, console: Console, report_on_stdout: bool, module: str = WORKER) -> tuple[RanksResult, Path]:
    rundir = Path(tempfile.mkdtemp(prefix="launchprof-ranks-"))
    try:
        config = worker_config(options, rundir)
        with AnalyzeProgress(console, repeat=options.repeat, has_target=True, stops=not options.run_to_end) as progress:
            result = run_ranks(config, rundir, options.nproc_per_node, options.timeout, options.show_output, progress.update, report_on_stdout, module)
    except BaseException:
        shutil.rmtree(rundir, ignore_errors=True)  # no result names it: nobody would ever remove it
        raise
    return result, rundir


def _evidence(rank: RankRun) -> Evidence:
    from launchprof.run.evidence import parse_events

    try:
        return parse_events(rank.result.events)
    except ValueError as exc:
        raise InternalError(f"rank {rank.rank}'s worker wrote a malformed event: {exc}") from None


def save_rank(options: Any, root: Path, rank: RankRun, rundir: Path, console: Console, profiles: dict[str, DeviceProfile | None]) -> RankInput:
    """Save one rank's run file and analyse it, as one GPU would. ``profiles`` keeps the device
    profile found for each machine, so that every rank on the same GPU model shares one (and
    its warnings are printed once)."""
    from launchprof.analysis import analyse  # imported while the workers ran (analyze_steps.import_analysis_meanwhile)
    from launchprof.run import load_run

    evidence = _evidence(rank)
    machine = evidence.machine
    key = repr(machine)
    if key not in profiles:
        profiles[key] = load_device_profile(options.profile, machine, console)
    profile = profiles[key]
    base = default_run_path(options.script, list(options.outputs), options.run_out)
    per_rank = dataclasses.replace(options, run_out=rank_path(base, rank.rank))
    path = save_run(per_rank, root, rank.result, rundir / f"rank{rank.rank}", evidence, profile)
    run = load_run(path)
    report = dataclasses.replace(analyse(run, profile), run_file=str(path))
    signal = (rank.exit or {}).get("signal")
    from launchprof.ranks.combine import RankInput

    return RankInput(
        rank=rank.rank, report=report, run=run, exit_code=rank.result.returncode, signal=signal, stopped=rank.stopped,
        timed_out=rank.result.timed_out, interrupted=rank.result.interrupted, output_tail=rank.output_tail, run_file=str(path),
    )  # fmt: skip


def write_rank_reports(inputs: list[RankInput], outputs: list[Output], render: RenderOptions, console: Console) -> None:
    """Each rank's own report next to every ``-o`` file: ``REPORT.rankN.EXT``. Not next to a
    stream or device (``-o /dev/stdout``), and a file that cannot be written is a warning: the
    run is done and every rank's run file is saved."""
    for out in outputs:
        if out.path is None or (out.path.exists() and not out.path.is_file()):
            continue
        for inp in inputs:
            if inp.report is None:
                continue
            path = rank_path(out.path, inp.rank)
            try:
                write_output(path, renderer_for(out.format, render).render(inp.report))
            except (OSError, UsageError) as exc:
                why = getattr(exc, "strerror", None) or exc
                console.print(f"[yellow]launchprof: warning: rank {inp.rank}'s report not written to {path}: {why}[/]", soft_wrap=True)


def run_ranks_analysis(options: Any, outputs: list[Output], module: str = WORKER) -> int:
    """The whole multi-rank analyze, after the usage checks (exit 2) have passed. ``module`` is
    what each rank runs: launchprof's worker (the CLI never changes it; tests wrap it)."""
    console = Console(stderr=True, width=terminal_width())
    root = find_project_root(options.script, options.project_root)
    meanwhile = import_analysis_meanwhile(o.format for o in outputs)
    result, rundir = measure_ranks(options, console, any(o.path is None and o.format != "text" for o in outputs), module)
    meanwhile.join()  # the modules below are imported by then, and nothing imports them twice at once
    check_launched(result, rundir)
    try:
        profiles: dict[str, DeviceProfile | None] = {}
        inputs = [save_rank(options, root, rank, rundir, console, profiles) for rank in result.ranks]
    finally:
        if result.log_path is None or all(r.result.returncode == 0 for r in result.ranks):
            shutil.rmtree(rundir, ignore_errors=True)
    if in_kept_runs(list(options.outputs), options.run_out) and inputs and inputs[0].run_file:
        prune(Path(inputs[0].run_file).parent)
    from launchprof.commands.emit import emit
    from launchprof.ranks.combine import combine  # pandas: imported after the workers, not before

    report = combine(inputs)
    render = RenderOptions(project_root=root, explain=options.explain, snippet=options.snippet)
    write_rank_reports(inputs, outputs, render, console)
    emit(report, outputs, render, github=options.github)
    for inp in inputs:
        console.print(f"[dim]rank {inp.rank} run saved: {inp.run_file}[/]", soft_wrap=True)
    return ranks_exit_code(report, result, options, console)


def ranks_exit_code(report: Report, result: RanksResult, options: Any, console: Console) -> int:
    """The documented exit code over every rank (see the module's docstring)."""
    ranks = report.ranks or []
    problems = [f"rank {s.rank}: {s.cause}" for s in ranks if s.status == "environment"]
    if problems:
        raise EnvironmentProblem(f"{'; '.join(problems)}; {NO_GPU_HELP}")
    targets = [f"rank {s.rank}: {s.cause}" for s in ranks if s.status == "target-problem"]
    if targets:
        raise UsageError("; ".join(targets))
    internal = [f"rank {r.rank}: {e.get('error')}" for r in result.ranks for e in r.result.events if e.get("type") == "internal-error"]
    if internal:
        raise InternalError(f"launchprof failed while measuring ({'; '.join(internal)}); the report holds what was measured before")
    # A rank stopped by the user's Ctrl-C did not fail; one interrupted on its own did
    failed = [s for s in ranks if s.status != "ok" and not (result.interrupted and s.status == "interrupted")]
    for s in failed:
        console.print(f"[bold red]launchprof: rank {s.rank} failed:[/] {escape(s.cause or '')}")  # a cause may hold "[/...]"
    if failed and result.log_path is not None:
        console.print(f"[dim]launcher output: {result.log_path}[/]", soft_wrap=True)
    if result.interrupted:
        console.print("[bold yellow]launchprof: interrupted[/]")
        return int(ExitCode.INTERRUPTED)
    if failed:
        return int(ExitCode.SCRIPT)
    never = [s.rank for s in ranks if report.target and s.verdict == "eager-only" and (report.run and report.run.target_calls == 0)]
    if never:
        raise UsageError(f"the target {report.target} was never called on rank(s) {', '.join(map(str, never))}: check --target")
    reason = fail_reason(report, options.fail_on)
    if reason:
        raise FailOnTriggered(reason)
    return int(ExitCode.OK)


def check_ranks(options: Any) -> None:
    """Usage errors of ``--nproc-per-node`` (exit 2), before anything runs."""
    n = options.nproc_per_node
    if n is None:
        return
    if n < 1:
        raise UsageError(f"--nproc-per-node must be 1 or more (got {n})")
    # The bucket plan and the compile comparison make extra calls on one rank's own schedule
    # (a size that runs out of memory, a compile that times out): with collectives in the
    # step the other ranks would wait for ever, so each rank's worker would skip them anyway.
    one_gpu = (
        ("--locate-async", options.locate_async),
        ("--save-trace", options.save_trace is not None),
        ("--compare", bool(options.compare)),
        ("--buckets", options.buckets is not None),
    )
    for flag, used in one_gpu:
        if used:
            raise UsageError(f"{flag} works on one GPU only: leave out --nproc-per-node, or leave out {flag}")


def visible_gpus() -> int | None:
    """How many CUDA devices torch sees here, asked in a child process so that this process
    never starts CUDA; None when that cannot be told (the launcher then finds out)."""
    code = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def check_rank_gpus(n: int, count: int | None = None) -> None:
    """Before N ranks start: no GPU at all is the environment (exit 4, one line, instead of N
    workers each saying so through torch's launcher), and more ranks than GPUs is a usage
    error (exit 2): ranks would share a device and their timings would mean nothing."""
    count = visible_gpus() if count is None else count
    if count is None:
        return
    if count == 0:
        raise EnvironmentProblem(f"no CUDA device is available here: --nproc-per-node {n} needs {n} GPUs ({NO_GPU_HELP})")
    if n > count:
        raise UsageError(f"--nproc-per-node {n} asks for more ranks than the {count} GPU(s) here: one rank per GPU")


def check_launched(result: RanksResult, rundir: Path) -> None:
    """No rank wrote a single event and nobody stopped them: torch's launcher itself could not
    start them (no torch, no torch.distributed). That is the environment (exit 4), in one line."""
    if result.timed_out or result.interrupted or any(r.result.events for r in result.ranks):
        return
    tail = ""
    if result.log_path is not None and result.log_path.is_file():
        lines = [line for line in result.log_path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        tail = f": {lines[-1][:300]}" if lines else ""
    shutil.rmtree(rundir, ignore_errors=True)
    raise EnvironmentProblem(f"torch's launcher (torch.distributed.run) started no rank (exit status {result.returncode}){tail}; {NO_GPU_HELP}")
