"""``launchprof compare BASE NEW``: a table of deltas and a CI regression gate.

The comparison is data (:mod:`launchprof.analysis.comparison`), the formats are
:mod:`launchprof.render.compare_text`; this module loads the two runs, writes the outputs and
turns tripped rules into exit 1. Every input goes through :func:`load_any`, the one place
that knows which files compare reads.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


from launchprof.analysis.load import report_from
from launchprof.commands.emit import stream_console, write_stream
from launchprof.analysis.comparison import Comparison, GateResult, compare, gate, parse_rule
from launchprof.errors import UsageError
from launchprof.fileio.output_files import plan_outputs, stream_is_utf8, write_output
from launchprof.render.compare_text import FORMATS, print_text, render
from launchprof.render.words.format import to_ascii
from launchprof.model.core import Report

@dataclass(frozen=True)
class CompareOptions:
    base: Path
    new: Path
    fail_on: tuple[str, ...]
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]


def load_any(path: Path) -> Report:
    """A JSON report, or a run file re-analysed with the device profile cached for its own
    machine (so its prediction is today's, with interval and basis); a missing or malformed
    file is a UsageError (exit 2)."""
    return report_from(Path(path))


def run(options: CompareOptions) -> int:
    rules = [parse_rule(r) for r in options.fail_on]  # a bad rule fails before any file is read
    outputs = plan_outputs(list(options.formats), list(options.outputs), allowed=FORMATS, inputs=[options.base, options.new])
    result = compare(load_any(options.base), load_any(options.new))
    verdict = gate(rules, result)
    labels = (str(options.base), str(options.new))
    for out in outputs:
        if out.path is not None:
            try:
                write_output(out.path, render(out.format, result, verdict, labels))
            except OSError as exc:
                raise UsageError(f"cannot write {out.path}: {exc.strerror or exc}") from None
    stdout_format = next((o.format for o in outputs if o.path is None), "text")
    write_stdout(stdout_format, result, verdict, labels)
    stderr = stream_console(sys.stderr)
    stderr.highlight, stderr.soft_wrap = False, True
    ascii_err = not stream_is_utf8(sys.stderr)
    if stdout_format != "text":  # the text table carries them already; keep CI logs readable beside json/md
        for warning in result.warnings:
            stderr.print(f"[yellow]launchprof: warning:[/] {_plain(warning, ascii_err)}: timings may not be comparable")
        for line in verdict.within_noise:
            stderr.print(f"launchprof: within noise: {_plain(line, ascii_err)}", markup=False)
    for reason in verdict.tripped:
        stderr.print(f"[bold red]launchprof: --fail-on[/] {_plain(reason, ascii_err)}")
    return 1 if verdict.tripped else 0


def _plain(text: str, ascii_only: bool) -> str:
    """Text from reports shown inside rich markup: brackets escaped, symbols the stream can hold."""
    from rich.markup import escape

    return escape(to_ascii(text) if ascii_only else text)


def write_stdout(fmt: str, result: Comparison, verdict: GateResult, labels: tuple[str, str]) -> None:
    """Through the one stream writer (commands/emit.py): ASCII where stdout cannot take UTF-8,
    and a reader that leaves early keeps the exit code."""
    ascii_only = not stream_is_utf8(sys.stdout)
    if fmt == "text":
        print_text(result, verdict, labels, stream_console(sys.stdout), ascii_only=ascii_only)
    else:
        write_stream(sys.stdout, fmt, render(fmt, result, verdict, labels, ascii_only=ascii_only))
