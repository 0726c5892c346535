"""The typer app. Thin on purpose: options -> a command module's ``run`` -> exit code.

Every command lives in ``launchprof/commands/<name>.py`` (memray's one module per
subcommand). Errors from the :mod:`launchprof.errors` hierarchy become one red line
on stderr and their documented exit code; nothing the user does wrong shows a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from launchprof import __version__
from launchprof.commands.helptext import PlainCommand
from launchprof.commands.quiet import quiet_streams, report_to_stdout
from launchprof.errors import ExitCode, LaunchprofError

app = typer.Typer(
    name="launchprof",
    help=(
        "Will CUDA graphs speed up this PyTorch workload? launchprof runs your script eagerly and as "
        "a CUDA graph replay, side by side, flags what breaks capture at its file and line, and says "
        "by how much graphs help and after how many replays."
    ),
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])


def error_line(message: str) -> None:
    """Print one error line on stderr (no traceback, no box)."""
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]launchprof: error:[/] {message}")


def handles_errors(fn: F) -> F:
    """Turn LaunchprofError into its one-line message and exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            code = fn(*args, **kwargs)
        except LaunchprofError as exc:
            error_line(str(exc))
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            error_line("interrupted")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:  # a launchprof bug: one line here, the traceback in a file
            import tempfile
            import traceback

            with tempfile.NamedTemporaryFile("w", prefix="launchprof-crash-", suffix=".txt", delete=False) as fh:
                traceback.print_exc(file=fh)
            error_line(f"internal error: {type(exc).__name__}: {exc} (traceback saved to {fh.name}; please report it)")
            raise typer.Exit(int(ExitCode.INTERNAL)) from None
        raise typer.Exit(int(code or 0))

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"launchprof {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """launchprof: profiling and advice for CUDA graphs in PyTorch."""


# Options and arguments as aliases, to keep signatures short; shared only where flag and help agree.

FormatOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="Output format: text, json, md, sarif, junit, html. Repeat with -o to write several; "
        "guessed from -o's extension when left out.",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    list[Path] | None,
    typer.Option("--output", "-o", help="Write the report here (repeatable, paired with -f in order).", show_default=False),
]
SourceRootOpt = Annotated[
    Path | None,
    typer.Option("--source-root", help="Make file paths in SARIF and annotations relative to this folder.", show_default=False),
]
ProjectRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-root",
        help="Hazard files are relative to this folder (default: the nearest folder above the script "
        "with pyproject.toml, setup.py or .git, else the script's folder).",
        show_default=False,
    ),
]
# The old name of --project-root, kept working but out of the help.
SourceRootAlias = Annotated[Path | None, typer.Option("--source-root", hidden=True, show_default=False)]
ExplainOpt = Annotated[
    bool,
    typer.Option("--explain", help="Add a short legend of terms (GPU span, launch gap, p10/p90, payback, pool vs workspace) to text and Markdown; HTML always has it."),
]
NoCalibrateOpt = Annotated[
    bool,
    typer.Option("--no-calibrate", help="Skip the quick device profile analyze measures (about 2 s) when none is cached for this GPU, driver and torch; the report then has no prediction."),
]
QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Print nothing but errors (a report sent to standard output with -f is still written)."),
]
GithubOpt = Annotated[
    bool,
    typer.Option("--github", help="Print ::error/::warning workflow commands for hazards (on by default when GITHUB_ACTIONS=true)."),
]
SnippetOpt = Annotated[
    bool, typer.Option("--snippet", help="Print the capture code to paste for a graphs-help target (Markdown and HTML always show it).")
]

ScriptArg = Annotated[Path, typer.Argument(help="The Python script to run, exactly as `python SCRIPT ARGS...` would.", show_default=False)]
ScriptArgsArg = Annotated[
    list[str] | None, typer.Argument(help="Arguments for the script; put them after `--`.", show_default=False)
]
AnalyzeTargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        metavar="NAME",
        help="The function to measure and capture: `step`, `model.forward`, `Net.forward` or `pkg.mod:fn`. "
        "Left out: a function marked @launchprof.target, else an eager-only profile of the whole script.",
        show_default=False,
    ),
]
AnalyzeFailOnOpt = Annotated[
    str,
    typer.Option("--fail-on", metavar="WHEN", help="Exit 1 when: never, error (any error hazard), warning (any warning or error), no-benefit (verdict is not graphs-help)."),
]
RepeatOpt = Annotated[
    int,
    typer.Option(
        "--repeat", "-n", min=3, max=10000,
        help="Timed calls of each kind (eager, replay); each kind stops early after 5 s and says so.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=1.0, help="Stop the script after this many seconds and report what was measured.", show_default=False),
]
AnalyzeProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", help="Device profile from `launchprof crossover` (default: the cached one for this GPU).", show_default=False),
]
ShowOutputOpt = Annotated[
    bool | None,
    typer.Option(
        "--show-output/--hide-output",
        help="Pass the script's output through as it runs, as `python SCRIPT` would (the default, but for "
        "--quiet); hidden output is kept in a log and named when the script fails. When a report goes to "
        "standard output, the script's output goes to standard error.",
        show_default=False,
    ),
]
AnalyzeSaveTraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--save-trace",
        help="Write the eager and replay profiler traces (Chrome trace JSON, for Perfetto) into this folder; a path ending in .json gets the eager trace.",
        show_default=False,
    ),
]
RunOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--run-out",
        help="Save the run file (NAME.lprun: events, traces, sources, raw samples) here. Default: next to "
        "the first -o file, else in .launchprof/runs/ (the last 10 are kept).",
        show_default=False,
    ),
]
LocateAsyncOpt = Annotated[
    bool,
    typer.Option(
        "--locate-async",
        help="If the script dies of an asynchronous CUDA error (device-side assert, illegal address), re-run it "
        "in a new worker with CUDA_LAUNCH_BLOCKING=1 to name the line that launched the faulting kernel. "
        "The script's side effects run twice.",
    ),
]

QuickOpt = Annotated[bool, typer.Option("--quick", help="A short sweep (seconds, not a minute): fewer node counts, durations, repeats and host rounds.")]
ProfileOutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Also write the device profile JSON here (it is always cached for analyze).", show_default=False),
]
CrossoverFormatOpt = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="What to print: text or json.")]
PlotOpt = Annotated[
    Path | None,
    typer.Option("--plot", help="Draw the crossover curves to this file (.png or .html).", show_default=False),
]

LintPathsArg = Annotated[list[Path], typer.Argument(help="Python files or folders to check.", show_default=False)]
LintTargetOpt = Annotated[
    str | None, typer.Option("--target", "-t", metavar="NAME", help="Check this function (and what it calls).", show_default=False)
]
AllFunctionsOpt = Annotated[bool, typer.Option("--all", help="Check every function, not only targets.")]
LintFailOnOpt = Annotated[str, typer.Option("--fail-on", metavar="WHEN", help="Exit 1 when: never, error, warning.")]
LintProjectRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-root",
        "--source-root",
        help="Project root: imports are followed inside it and file paths are relative to it "
        "(default: the nearest folder with pyproject.toml, setup.py or .git).",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", metavar="GLOB", help="Skip files and folders matching this glob (repeatable; also [tool.launchprof] exclude).", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Report calls lint cannot follow as warnings.")]

SessionArg = Annotated[
    Path, typer.Argument(help="A run file (NAME.lprun, re-analysed) or a JSON report written by `analyze -f json`.", show_default=False)
]
ReportProfileOpt = Annotated[
    Path | None,
    typer.Option(
        "--profile",
        help="Device profile from `launchprof crossover`: recomputes a run's prediction and draws the crossover curve in HTML.",
        show_default=False,
    ),
]
ReportSaveTraceOpt = Annotated[
    Path | None,
    typer.Option("--save-trace", help="Write a run file's eager and replay profiler traces (Chrome trace JSON) into this folder.", show_default=False),
]

BaseArg = Annotated[Path, typer.Argument(help="The baseline: a JSON report (or a .lprun run file).", show_default=False)]
NewArg = Annotated[Path, typer.Argument(help="The new run: a JSON report (or a .lprun run file).", show_default=False)]
CompareFailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        metavar="RULE",
        help="Rule that makes the exit code 1, repeatable: METRIC:+N% or METRIC:-N% (relative), METRIC:+X "
        "(absolute), `new-hazards`, `verdict` (got worse). Metrics: kernels_per_step, gpu_idle_fraction, "
        "eager_step_us, replay_step_us, speedup, graph_nodes, instantiate_us, launch_gap_us. "
        "A step-time rule trips only when the change is also significant (Mann-Whitney U, p < 0.05) "
        "wherever both reports keep raw samples. "
        "Example: --fail-on kernels_per_step:+5% --fail-on speedup:-10%.",
        show_default=False,
    ),
]
CompareFormatOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="Output format: text, json, md. Repeat with -o to write several; guessed from -o's extension when left out.",
        show_default=False,
    ),
]


@app.command(
    cls=PlainCommand,
    epilog="Exit codes: 0 ok; 1 a --fail-on condition was met; 2 usage error; 3 the script failed "
    "(what was measured before is still reported); 4 no usable CUDA device or torch; 70 internal error "
    "(a launchprof bug; the traceback is saved to a file); 130 interrupted.",
)
@handles_errors
def analyze(
    script: ScriptArg,
    script_args: ScriptArgsArg = None,
    target: AnalyzeTargetOpt = None,
    formats: FormatOpt = None,
    outputs: OutputOpt = None,
    fail_on: AnalyzeFailOnOpt = "never",
    repeat: RepeatOpt = 50,
    timeout: TimeoutOpt = None,
    profile: AnalyzeProfileOpt = None,
    show_output: ShowOutputOpt = None,
    save_trace: AnalyzeSaveTraceOpt = None,
    project_root: ProjectRootOpt = None,
    source_root: SourceRootAlias = None,
    github: GithubOpt = False,
    run_out: RunOutOpt = None,
    snippet: SnippetOpt = False,
    locate_async: LocateAsyncOpt = False,
    explain: ExplainOpt = False,
    no_calibrate: NoCalibrateOpt = False,
    quiet: QuietOpt = False,
) -> int:
    """Run SCRIPT eagerly and as a CUDA graph replay; report speedup, hazards and a verdict.

    Example: launchprof analyze decode.py --target step -o report.json -- --batch 4
    """
    from launchprof.commands.analyze import AnalyzeOptions, run

    with quiet_streams(quiet, report_to_stdout(formats or [], outputs or [])):
        return run(
            AnalyzeOptions(
                script=script,
                script_args=tuple(script_args or ()),
                target=target,
                formats=tuple(formats or ()),
                outputs=tuple(outputs or ()),
                fail_on=fail_on,
                repeat=repeat,
                timeout=timeout,
                profile=profile,
                show_output=(not quiet) if show_output is None else show_output,
                quiet=quiet,
                locate_async=locate_async,
                calibrate=not no_calibrate,
                explain=explain,
                save_trace=save_trace,
                project_root=project_root or source_root,
                github=github,
                run_out=run_out,
                snippet=snippet,
            )
        )


@app.command(
    cls=PlainCommand,
    epilog="Exit codes: 0 ok; 2 usage error; 4 no usable CUDA device or torch; 70 internal error; 130 interrupted.",
)
@handles_errors
def crossover(
    quick: QuickOpt = False,
    output: ProfileOutputOpt = None,
    format: CrossoverFormatOpt = "text",
    plot: PlotOpt = None,
    quiet: QuietOpt = False,
) -> int:
    """Measure this GPU's eager-versus-replay crossover and write a device profile.

    The profile is cached per GPU, driver and torch; analyze uses it to predict speedups,
    also for workloads that cannot be captured yet.
    """
    from launchprof.commands.crossover import CrossoverOptions, run

    with quiet_streams(quiet, keep_stdout=format != "text"):
        return run(CrossoverOptions(quick=quick, output=output, format=format, plot=plot))


@app.command(
    cls=PlainCommand,
    epilog="Exit codes: 0 ok; 1 a --fail-on condition was met; 2 usage error (also: nothing chosen to check); "
    "70 internal error; 130 interrupted.",
)
@handles_errors
def lint(
    paths: LintPathsArg,
    target: LintTargetOpt = None,
    all_functions: AllFunctionsOpt = False,
    formats: FormatOpt = None,
    outputs: OutputOpt = None,
    fail_on: LintFailOnOpt = "never",
    project_root: LintProjectRootOpt = None,
    exclude: ExcludeOpt = None,
    strict: StrictOpt = False,
    github: GithubOpt = False,
    quiet: QuietOpt = False,
) -> int:
    """Find capture hazards statically, without a GPU (CI-friendly).

    Checks functions marked @launchprof.target, the --target function, or every function
    with --all, and the functions they call, also in other modules of the project.
    Silence a finding with `# launchprof: ignore[kind]` on its line.
    """
    from launchprof.commands.lint import LintOptions, run

    with quiet_streams(quiet, report_to_stdout(formats or [], outputs or [])):
        return run(
            LintOptions(
                paths=tuple(paths),
                target=target,
                all_functions=all_functions,
                formats=tuple(formats or ()),
                outputs=tuple(outputs or ()),
                fail_on=fail_on,
                source_root=project_root,
                github=github,
                exclude=tuple(exclude or ()),
                strict=strict,
            )
        )


@app.command(
    cls=PlainCommand,
    epilog="Exit codes: 0 ok; 2 usage error (missing, malformed or newer file; bad format); 70 internal error; 130 interrupted.",
)
@handles_errors
def report(
    session: SessionArg,
    formats: FormatOpt = None,
    outputs: OutputOpt = None,
    project_root: ProjectRootOpt = None,
    source_root: SourceRootAlias = None,
    github: GithubOpt = False,
    profile: ReportProfileOpt = None,
    save_trace: ReportSaveTraceOpt = None,
    snippet: SnippetOpt = False,
    explain: ExplainOpt = False,
    quiet: QuietOpt = False,
) -> int:
    """Re-analyse a saved run, or re-render a JSON report, in any format (no GPU needed)."""
    from launchprof.commands.report import ReportOptions, run

    with quiet_streams(quiet, report_to_stdout(formats or [], outputs or [])):
        return run(
            ReportOptions(
                session=session,
                formats=tuple(formats or ()),
                outputs=tuple(outputs or ()),
                project_root=project_root or source_root,
                github=github,
                profile=profile,
                explain=explain,
                save_trace=save_trace,
                snippet=snippet,
            )
        )


@app.command(
    cls=PlainCommand,
    epilog="Exit codes: 0 no rule tripped; 1 a --fail-on rule tripped; 2 usage error (bad rule, format or file); "
    "70 internal error; 130 interrupted.",
)
@handles_errors
def compare(
    base: BaseArg,
    new: NewArg,
    fail_on: CompareFailOnOpt = None,
    formats: CompareFormatOpt = None,
    outputs: OutputOpt = None,
    quiet: QuietOpt = False,
) -> int:
    """Compare two reports: a regression gate for CI."""
    from launchprof.commands.compare import CompareOptions, run

    with quiet_streams(quiet, report_to_stdout(formats or [], outputs or [])):
        return run(CompareOptions(base=base, new=new, fail_on=tuple(fail_on or ()), formats=tuple(formats or ()), outputs=tuple(outputs or ())))


def main() -> None:
    """Console-script entry point: a parser error is one ``launchprof: error:`` line, exit 2."""
    try:
        from typer._click.exceptions import ClickException
    except ImportError:  # a typer that uses click itself
        from click.exceptions import ClickException
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()
        else:
            error_line(exc.format_message().replace("\n", " "))
        sys.exit(int(ExitCode.USAGE) if exc.exit_code == 2 or type(exc).__name__ == "NoArgsIsHelpError" else exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
