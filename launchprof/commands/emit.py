"""Render a report to every requested output; shared by analyze, lint and report.

The only place, with :mod:`launchprof.outputs`, where reports reach files and streams:
files through :func:`~launchprof.outputs.write_output`; standard output gets at most one
report (the text report when nothing else goes there); GitHub annotations and "wrote …"
lines go to standard error, so a report piped to a file stays parseable. A stream that
cannot encode UTF-8 gets the report in ASCII instead of a crash.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

from launchprof.errors import UsageError
from launchprof.outputs import Output, TrimmedLines, for_stream, stream_is_utf8, write_output
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.console import AsciiStream
from launchprof.render.github import annotations, github_enabled
from launchprof.render.paths import report_root, sorted_hazards

if TYPE_CHECKING:  # annotations only: the models load pydantic, which lint's text and JSON reports skip
    from launchprof.session import Report

# With the report also in a file, the terminal lists this many findings and points there.
TERMINAL_FINDINGS = 50


def emit(
    report: Report,
    outputs: list[Output],
    options: RenderOptions,
    github: bool = False,
    console: Console | None = None,
) -> None:
    """Write each output; with none going to stdout, print the text report on the terminal."""
    to_stdout = [o for o in outputs if o.path is None]
    files = [o.path for o in outputs if o.path is not None]
    for out in outputs:
        if out.path is None:
            continue
        text = renderer_for(out.format, options).render(report)
        try:
            write_output(out.path, text)
        except OSError as exc:
            raise UsageError(f"cannot write {out.path}: {exc.strerror or exc}") from None
    if to_stdout and to_stdout[0].format != "text":
        write_stream(sys.stdout, to_stdout[0].format, renderer_for(to_stdout[0].format, options).render(report))
    else:
        print_text(capped(report, files[0]) if files else report, options, console)
    if github_enabled(github):
        root = report_root(report, options)
        write_stream(sys.stderr, "text", "".join(line + "\n" for line in annotations(report.hazards, root)))
    err = stream_console(sys.stderr)
    for out in outputs:
        if out.path is not None:
            err.print(f"[dim]wrote {out.format} report to {out.path}[/]", highlight=False)


def capped(report: Report, full: Path) -> Report:
    """The terminal's copy of a report that is also written to a file: at most
    :data:`TERMINAL_FINDINGS` findings, most severe first, and where the rest are.

    Printing twenty thousand findings took seconds of a lint run; the file has them all."""
    total = len(report.hazards)
    if total <= TERMINAL_FINDINGS:
        return report
    more = total - TERMINAL_FINDINGS
    note = f"\u2026 {more} more finding(s) in {full} (the terminal shows the first {TERMINAL_FINDINGS} of {total}, most severe first)"
    return dataclasses.replace(report, hazards=sorted_hazards(report.hazards)[:TERMINAL_FINDINGS], notes=[*report.notes, note])


def write_stream(stream: TextIO, fmt: str, text: str) -> None:
    """Write a rendered document to a stream, in ASCII when the stream cannot take UTF-8."""
    stream.write(for_stream(fmt, text, stream_is_utf8(stream)))
    stream.flush()


class PipeConsole(Console):
    """A console whose reader may leave early (``| head``): rich's default answer to a broken
    pipe is exit status 1, which a CI gate would read as "a rule was met". Here the rest of
    the output goes nowhere and the command's own exit code stands."""

    def on_broken_pipe(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass  # not a real file descriptor (a test's capture): nothing more to silence
        finally:
            os.close(devnull)


def stream_console(stream: TextIO) -> Console:
    """A rich console on ``stream``; ASCII boxes and symbols when it cannot encode UTF-8,
    and no padding spaces at line ends when it is not a terminal (a pipe, a file)."""
    isatty = getattr(stream, "isatty", None)
    target: TextIO = stream if isatty and isatty() else TrimmedLines(stream)  # type: ignore[assignment]
    if stream_is_utf8(stream):
        return PipeConsole(file=target)
    return PipeConsole(file=AsciiStream(target), emoji=False)


def print_text(report: Report, options: RenderOptions, console: Console | None = None) -> None:
    from launchprof.render.console import ConsoleRenderer

    ConsoleRenderer(options).print(report, console or stream_console(sys.stdout))
