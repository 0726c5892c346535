"""``launchprof report RUN.lprun | REPORT.json``: re-render a saved analysis, no GPU needed.

A run file is re-analysed with this launchprof's rules and the device profile that
``analysis.load.choose_profile`` picks (``--profile``, else the one cached for the run's
machine, else the one the run carries), so the prediction is recomputed; a JSON report is
rendered as it is.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from launchprof.analysis.load import is_run_file, open_saved
from launchprof.commands.checks import check_project_root
from launchprof.commands.emit import emit, stream_console
from launchprof.fileio.output_files import plan_outputs
from launchprof.render import RenderOptions


@dataclass(frozen=True)
class ReportOptions:
    session: Path
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]
    project_root: Path | None
    github: bool
    profile: Path | None = None
    save_trace: Path | None = None
    snippet: bool = False  # --snippet: the capture snippet in the terminal
    explain: bool = False


def run(options: ReportOptions) -> int:
    """Check the outputs first (a typo fails before anything is read), then render each.

    A missing, truncated, malformed or newer-schema file raises UsageError (exit 2)."""
    outputs = plan_outputs(list(options.formats), list(options.outputs), inputs=[options.session, *filter(None, [options.profile])])
    check_project_root(options.project_root)
    if options.save_trace is not None:
        save_traces(options.session, options.save_trace)
    report, chosen = open_saved(options.session, options.profile)
    # The profile the prediction uses also draws the HTML crossover curve.
    profile = chosen.profile if chosen is not None else None
    warnings = list(chosen.warnings) if chosen is not None else []
    if options.profile is not None and not is_run_file(options.session):
        warnings.append(f"--profile is not used for {options.session}: a JSON report is rendered as it is (a run file is re-analysed)")
    for warning in warnings:
        stream_console(sys.stderr).print(f"[yellow]launchprof: warning:[/] {warning}", highlight=False)
    root = options.project_root or (Path(report.project_root) if report.project_root else None)
    render = RenderOptions(project_root=root, device_profile=profile, explain=options.explain, snippet=options.snippet)
    emit(report, outputs, render, github=options.github)
    return 0


def save_traces(session: Path, dest: Path) -> None:
    """``--save-trace``: only a run file holds profiler traces; a JSON report has none."""
    from launchprof.analysis.load import is_run_file
    from launchprof.errors import UsageError
    from launchprof.run import load_run
    from launchprof.commands.trace_export import check_destination, export_traces

    check_destination(dest)
    if not os.path.isfile(session) or not is_run_file(session):
        raise UsageError(f"--save-trace needs a run file (NAME.lprun); {session} is not one")
    written = export_traces(load_run(session), dest)
    err = stream_console(sys.stderr)
    for path in written:  # as -o says what it wrote
        err.print(f"[dim]wrote trace to {path}[/]", highlight=False, soft_wrap=True)  # a path is not wrapped
    if not written:
        err.print(f"[yellow]launchprof: warning:[/] {session} holds no profiler trace (it was analyzed without a profiler session: analyze again with --kernels or --save-trace to record one): nothing written to {dest}", highlight=False)
