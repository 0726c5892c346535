"""The typer app. Thin on purpose: options -> a command module's ``run`` -> exit code.

Every command lives in ``launchprof/commands/<name>.py`` (memray's one module per
subcommand). Errors from the :mod:`launchprof.errors` hierarchy become one red line
on stderr and their documented exit code; nothing the user does wrong shows a traceback.
"""

from __future__ import annotations

import errno
import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from launchprof.version import __version__
from launchprof.commands.helptext import PlainCommand, PlainGroup
from launchprof.commands.options import (  # noqa: F401 - typer reads the aliases from the signatures
    FormatOpt,
    OutputOpt,
    ProjectRootOpt,
    ExplainOpt,
    NoCalibrateOpt,
    PlainQuietOpt,
    QuietOpt,
    GithubOpt,
    SnippetOpt,
    ScriptArg,
    ScriptArgsArg,
    AnalyzeTargetOpt,
    AnalyzeFailOnOpt,
    RepeatOpt,
    TimeoutOpt,
    RunToEndOpt,
    CompareOpt,
    CompileTimeoutOpt,
    CompileRoundsOpt,
    AnalyzeProfileOpt,
    ShowOutputOpt,
    AnalyzeSaveTraceOpt,
    AnalyzeKernelsOpt,
    RunOutOpt,
    NprocOpt,
    LocateAsyncOpt,
    QuickOpt,
    BucketsOpt,
    BucketMemoryOpt,
    ProfileOutputOpt,
    CrossoverFormatOpt,
    PlotOpt,
    LintPathsArg,
    LintTargetOpt,
    AllFunctionsOpt,
    LintFailOnOpt,
    LintProjectRootOpt,
    ExcludeOpt,
    StrictOpt,
    SessionArg,
    ReportProfileOpt,
    ReportSaveTraceOpt,
    BaseArg,
    NewArg,
    CompareFailOnOpt,
    CompareFormatOpt,
)
from launchprof.commands.quiet import quiet_streams, report_to_stdout
from launchprof.errors import ExitCode, LaunchprofError

app = typer.Typer(
    name="launchprof",
    cls=PlainGroup,
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
    from rich.markup import escape

    from launchprof.fileio.output_files import terminal_width

    # The message is text, not markup: "[tool.launchprof]" or "ignore[kind]" must survive.
    Console(stderr=True, highlight=False, soft_wrap=True, width=terminal_width()).print(f"[bold red]launchprof: error:[/] {escape(message)}")


# errno values of an output that cannot take the bytes: full disk or quota, too large, I/O error.
FULL_OR_BROKEN_OUTPUT = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


# Set once a command has printed "interrupted": typer turns a Ctrl-C during its own parsing
# into a bare exit 130, which main() then reports itself.
INTERRUPT_SAID: list[bool] = []


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
            INTERRUPT_SAID.append(True)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except OSError as exc:
            if exc.errno not in FULL_OR_BROKEN_OUTPUT:
                crash(exc)
            raise typer.Exit(output_failed(exc)) from None
        except Exception as exc:  # a launchprof bug: one line here, the traceback in a file
            crash(exc)
        raise typer.Exit(int(code or 0))

    return wrapper  # type: ignore[return-value]


def output_failed(exc: OSError) -> int:
    """A full disk or a failing device (`> /dev/full`) is the user's environment, not a bug:
    one line; returns the exit code, 2. Stdout then points at /dev/null, so the interpreter's
    last flush of the bytes it could not write does not print a second error at exit."""
    import os

    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    except OSError:
        pass
    where = exc.filename if exc.filename is not None else "to standard output"
    error_line(f"cannot write {where}: {exc.strerror or exc}")
    return int(ExitCode.USAGE)


def crash(exc: BaseException) -> None:
    """A launchprof bug: one line on stderr, the traceback in a file, exit 70."""
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="launchprof-crash-", suffix=".txt", delete=False) as fh:
        traceback.print_exception(exc, file=fh)
    error_line(f"internal error: {type(exc).__name__}: {exc} (traceback saved to {fh.name}; please report it)")
    raise typer.Exit(int(ExitCode.INTERNAL)) from None


def _version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"launchprof {__version__}")
        except OSError as exc:  # `--version > /dev/full`: outside handles_errors
            raise typer.Exit(output_failed(exc)) from None
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """launchprof: profiling and advice for CUDA graphs in PyTorch."""


@app.command(
    cls=PlainCommand,
    short_help="Measure a script's target eagerly and as a graph replay; verdict, hazards, fixes.",
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
    run_to_end: RunToEndOpt = False,
    profile: AnalyzeProfileOpt = None,
    show_output: ShowOutputOpt = None,
    save_trace: AnalyzeSaveTraceOpt = None,
    kernels: AnalyzeKernelsOpt = False,
    project_root: ProjectRootOpt = None,
    github: GithubOpt = False,
    run_out: RunOutOpt = None,
    snippet: SnippetOpt = False,
    locate_async: LocateAsyncOpt = False,
    explain: ExplainOpt = False,
    no_calibrate: NoCalibrateOpt = False,
    quiet: QuietOpt = False,
    buckets: BucketsOpt = None,
    bucket_memory: BucketMemoryOpt = "2GiB",
    nproc_per_node: NprocOpt = None,
    compare: CompareOpt = None,
    compile_timeout: CompileTimeoutOpt = 300.0,
    compile_rounds: CompileRoundsOpt = 1,
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
                run_to_end=run_to_end,
                profile=profile,
                show_output=(not quiet) if show_output is None else show_output,
                quiet=quiet,
                locate_async=locate_async,
                calibrate=not no_calibrate,
                explain=explain,
                save_trace=save_trace,
                kernels=kernels,
                project_root=project_root,
                github=github,
                run_out=run_out,
                snippet=snippet,
                buckets=buckets,
                bucket_memory=bucket_memory,
                nproc_per_node=nproc_per_node,
                compare=tuple(compare or ()),
                compile_timeout=compile_timeout,
                compile_rounds=compile_rounds,
            )
        )


@app.command(
    cls=PlainCommand,
    short_help="Measure this GPU's eager-versus-replay costs; cache the device profile.",
    epilog="Exit codes: 0 ok; 2 usage error; 4 no usable CUDA device or torch; 70 internal error; 130 interrupted.",
)
@handles_errors
def crossover(
    quick: QuickOpt = False,
    output: ProfileOutputOpt = None,
    format: CrossoverFormatOpt = "text",
    plot: PlotOpt = None,
    quiet: PlainQuietOpt = False,
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
    short_help='Find capture hazards statically, without a GPU (CI-friendly).',
    epilog="Exit codes: 0 ok; 1 a --fail-on condition was met; 2 usage error (also: nothing chosen to check, no Python file found); "
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
                project_root=project_root,
                github=github,
                exclude=tuple(exclude or ()),
                strict=strict,
            )
        )


@app.command(
    cls=PlainCommand,
    short_help='Re-analyse a run file (.lprun) or re-render a JSON report, in any format.',
    epilog="Exit codes: 0 ok; 2 usage error (missing, malformed or newer file; bad format); 70 internal error; 130 interrupted.",
)
@handles_errors
def report(
    session: SessionArg,
    formats: FormatOpt = None,
    outputs: OutputOpt = None,
    project_root: ProjectRootOpt = None,
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
                project_root=project_root,
                github=github,
                profile=profile,
                explain=explain,
                save_trace=save_trace,
                snippet=snippet,
            )
        )


@app.command(
    cls=PlainCommand,
    short_help='Compare two runs or reports: a regression gate for CI.',
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
    quiet: PlainQuietOpt = False,
) -> int:
    """Compare two reports: a regression gate for CI."""
    from launchprof.commands.compare import CompareOptions, run

    with quiet_streams(quiet, report_to_stdout(formats or [], outputs or [])):
        return run(CompareOptions(base=base, new=new, fail_on=tuple(fail_on or ()), formats=tuple(formats or ()), outputs=tuple(outputs or ())))


def main() -> None:
    """Console-script entry point: a parser error is one ``launchprof: error:`` line, exit 2."""
    if sys.stdout is None:  # started with standard output closed (`>&-`): nothing can be printed
        error_line("cannot write to standard output: it is closed")
        sys.exit(int(ExitCode.USAGE))
    try:
        from launchprof.commands.plain_argv import call_plainly

        code = call_plainly(app, sys.argv[1:])  # a plain `lint` command line skips typer's parser
        if code is None:
            code = app(standalone_mode=False)
        if code == int(ExitCode.INTERRUPTED) and not INTERRUPT_SAID:
            error_line("interrupted")  # Ctrl-C while typer parsed: it returned 130 silently
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except OSError as exc:  # --help into a full device: click writes it outside the commands
        if exc.errno not in FULL_OR_BROKEN_OUTPUT:
            raise
        sys.exit(output_failed(exc))
    except typer.TyperException as exc:  # the base of every parser error typer raises
        error_line(exc.format_message().replace("\n", " "))
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
