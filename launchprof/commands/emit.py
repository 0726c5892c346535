"""Render a report to every requested output; shared by analyze, lint and report."""

from __future__ import annotations

import sys
from rich.console import Console

from launchprof.errors import UsageError
from launchprof.outputs import Output, write_atomic
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.github import annotations, github_enabled
from launchprof.session import Report


def emit(
    report: Report,
    outputs: list[Output],
    options: RenderOptions,
    github: bool = False,
    console: Console | None = None,
) -> None:
    """Write each output; with none going to stdout, print the text report on the terminal."""
    to_stdout = [o for o in outputs if o.path is None]
    for out in outputs:
        if out.path is None:
            continue
        text = renderer_for(out.format, options).render(report)
        try:
            write_atomic(out.path, text)
        except OSError as exc:
            raise UsageError(f"cannot write {out.path}: {exc.strerror or exc}") from None
    if to_stdout:
        out = to_stdout[0]
        if out.format == "text":
            print_text(report, options, console)
        else:
            sys.stdout.write(renderer_for(out.format, options).render(report))
            sys.stdout.flush()
    else:
        print_text(report, options, console)
    if github_enabled(github):
        for line in annotations(report.hazards, options.source_root):
            print(line)
    for out in outputs:
        if out.path is not None:
            Console(stderr=True).print(f"[dim]wrote {out.format} report to {out.path}[/]")


def print_text(report: Report, options: RenderOptions, console: Console | None = None) -> None:
    from launchprof.render.console import ConsoleRenderer

    ConsoleRenderer(options).print(report, console or Console())
