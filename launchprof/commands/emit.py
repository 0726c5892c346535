"""Render a report to every requested output; shared by analyze, lint and report.

The only place, with :mod:`launchprof.fileio.output_files`, where reports reach files and streams:
files through :func:`~launchprof.fileio.output_files.write_output`; standard output gets at most one
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
from rich.text import Text

from launchprof.commands.quiet import annotation_stream
from launchprof.errors import UsageError
from launchprof.fileio.output_files import Output, TrimmedLines, for_stream, stream_is_utf8, terminal_width, write_output
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.console import AsciiStream
from launchprof.render.github import annotations, github_enabled
from launchprof.render.paths import report_root, sorted_hazards

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report

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
        console = console or stream_console(sys.stdout)
        shown = capped(report, files[0]) if files else report
        counted = dataclasses.replace(options, counted_hazards=report.hazards) if shown is not report else options
        print_text(shown, counted, console)
        rest = more_findings(report, files[0]) if files else None
        if rest is not None:  # soft-wrapped, after the report's own lines: the path stays whole to copy
            console.print(Text(f"note: {rest}", style="dim"), soft_wrap=True)
    if github_enabled(github):
        root = report_root(report, options)
        write_stream(annotation_stream(), "text", "".join(line + "\n" for line in annotations(report.hazards, root)))
    err = stream_console(sys.stderr)
    for out in outputs:
        if out.path is not None:
            err.print(f"[dim]wrote {out.format} report to {out.path}[/]", highlight=False, soft_wrap=True)  # the path stays whole


def capped(report: Report, full: Path) -> Report:
    """The terminal's copy of a report that is also written to ``full``: at most
    :data:`TERMINAL_FINDINGS` findings, most severe first (:func:`more_findings` says where
    the rest are).

    Printing twenty thousand findings took seconds of a lint run; the file has them all."""
    if len(report.hazards) <= TERMINAL_FINDINGS:
        return report
    return dataclasses.replace(report, hazards=sorted_hazards(report.hazards)[:TERMINAL_FINDINGS])


def more_findings(report: Report, full: Path) -> str | None:
    """Where the findings :func:`capped` left out are; None when it left none out."""
    total = len(report.hazards)
    if total <= TERMINAL_FINDINGS:
        return None
    more = total - TERMINAL_FINDINGS
    return f"\u2026 {more} more finding(s) in {full} (the terminal shows the first {TERMINAL_FINDINGS} of {total}, most severe first)"


def write_stream(stream: TextIO, fmt: str, text: str) -> None:
    """Write a rendered document to a stream, in ASCII when the stream cannot take UTF-8.
    A reader that leaves early (``| head -c5``) ends the output quietly, as on the console."""
    try:
        stream.write(for_stream(fmt, text, stream_is_utf8(stream)))
        stream.flush()
    except BrokenPipeError:
        reader_left(stream)


def reader_left(stream: TextIO) -> None:
    """Point ``stream``'s descriptor at /dev/null: what is still buffered for a reader that
    left, and what follows, goes nowhere instead of failing again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):
        pass  # not a real file descriptor (a test's capture): nothing more to silence
    finally:
        os.close(devnull)


class PipeConsole(Console):
    """A console whose reader may leave early (``| head``): rich's default answer to a broken
    pipe is exit status 1, which a CI gate would read as "a rule was met". Here the rest of
    the output goes nowhere and the command's own exit code stands."""

    def on_broken_pipe(self) -> None:
        reader_left(sys.stdout)


def stream_console(stream: TextIO) -> Console:
    """A rich console on ``stream``; ASCII boxes and symbols when it cannot show UTF-8, no
    padding spaces at line ends when it is not a terminal (a pipe, a file), a readable width
    whatever ``COLUMNS`` says. Standard error carries messages, not a layout: they are
    soft-wrapped (never broken by rich), so a path in them copies whole."""
    isatty = getattr(stream, "isatty", None)
    target: TextIO = stream if isatty and isatty() else TrimmedLines(stream)  # type: ignore[assignment]
    soft = stream is sys.stderr
    if stream_is_utf8(stream):
        return PipeConsole(file=target, width=terminal_width(), soft_wrap=soft)
    return PipeConsole(file=AsciiStream(target), emoji=False, width=terminal_width(), soft_wrap=soft)


def print_text(report: Report, options: RenderOptions, console: Console | None = None) -> None:
    from launchprof.render.console import ConsoleRenderer

    ConsoleRenderer(options).print(report, console or stream_console(sys.stdout))
