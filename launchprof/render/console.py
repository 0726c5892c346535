"""The terminal report (rich): the verdict and the numbers that matter first, details below.

A headline panel, then one row per figure (label, value: one line each at 80 columns),
then hazards ordered by severity with file:line and the fix. Every sentence and number
comes from :mod:`launchprof.render.figures`, so the terminal says what Markdown and HTML
say. Nothing is cut with an ellipsis: long cells wrap, because CI logs and pipes have no
way to widen a column. On a stream that cannot encode Unicode the boxes are ASCII and
the symbols are spelled out (:func:`launchprof.render.words.format.to_ascii`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from launchprof.enums import Severity
from launchprof.fileio.output_files import StreamWrapper
from launchprof.render import figures, headline_text
from launchprof.render.words import format as fmt
from launchprof.render.anatomy_text import anatomy_line
from launchprof.render.buckets_text import console_buckets
from launchprof.render.number_rows import key_numbers
from launchprof.render.renderer import Renderer
from launchprof.render.compile_text import compile_console
from launchprof.render.partial_text import training_console
from launchprof.render.fitted import Col, FittedTable
from launchprof.render.words.fix_text import cannot_head, cannot_line, fix_sentence
from launchprof.render.words.verify_text import FAILED, VERIFIED, fix_heading, fix_state, trial_line, verification_text
from launchprof.render.legend import TERMS
from launchprof.render.words.notes_text import report_notes
from launchprof.render.words.training_text import verdict_clause
from launchprof.render.paths import library_location, location, relative, report_root, sorted_hazards
from launchprof.render.ranks import console_ranks
from launchprof.render.whole_text import Whole, code_text, whole_parts

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report


def headline(report: Report) -> Text:
    """The verdict, then the figures a reader decides on, one per line: the replay step first
    (the stable figure), the speedup with its interval (its method is in the figure table),
    then what the verdict rests on."""
    v = figures.verdict(report)
    text = Text()
    text.append(figures.verdict_label(report), style=v.style if v else "bold")
    text.append(f"  [{report.verdict}]", style="dim")
    verified = headline_text.verified_fix_line(report)
    lines = [
        headline_text.invalid_line(report),
        verified,
        headline_text.step_line(report),
        headline_text.speedup_line(report),
        headline_text.marginal_reason(report),
        figures.payback_text(report),
        *headline_text.plan_lines(report),
        None if verified else figures.prediction_text(report),  # a fix measured on the user's calls outranks a prediction
        figures.kernels_text(report),
        figures.gpu_idle_text(report),
        figures.memory_for_no_gain(report),
        verdict_clause(report).strip(),
    ]
    for line in lines:
        if line:
            text.append(f"\n{line}")
    return text


def candidates(report: Report, root: Path) -> Table | None:
    """Whole-script mode: the functions to analyse next, with the command for each."""
    if not report.candidates:
        return None
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title="Candidate targets (most kernels per call)", title_justify="left")
    table.add_column("function", overflow="fold")
    table.add_column("calls", justify="right")
    table.add_column("kernels/call", justify="right")
    table.add_column("analyse it with", ratio=1, overflow="fold")
    for c in report.candidates:
        where = f"{relative(c.file, root)}:{c.line}" if c.file else ""
        table.add_row(f"{c.name}\n{where}" if where else c.name, str(c.calls), f"{c.kernels_per_call:g}", c.command)
    return table


def numbers(report: Report, explain: bool = False) -> FittedTable | None:
    """The figure table: the default few, or with ``explain`` every figure and the prediction's basis and why."""
    if report.mode == "lint" or (report.eager is None and report.replay is None):
        return None
    rows = [list(row) for row in key_numbers(report, explain)]
    basis = figures.basis_text(report) if explain else None
    if basis:
        rows.append(["Prediction basis", basis])
    explanation = (figures.prediction(report) or {}).get("explanation") if explain else None
    if explanation:
        rows.append(["Prediction, why", str(explanation)])
    if not rows:
        return None
    cols = [Col("figure", style="bold", least=20), Col("value")]  # narrower: each label above its value
    return FittedTable(cols, rows, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_header=False)


def hazards(report: Report, root: Path) -> Table | None:
    if not report.hazards:
        return None
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title="Hazards (fix from the top)", title_justify="left")
    table.add_column("severity", overflow="fold")
    table.add_column("where, what, and how to fix it", ratio=1, overflow="fold")
    ordered = sorted_hazards(report.hazards)
    repeats = figures.same_fix_as(ordered, root)
    for i, h in enumerate(ordered):
        body = Text()
        body.append(f"{location(h, root) or fmt.NA}  {h.kind}\n", style="bold")
        body.append(figures.hazard_message(h, report))
        library = library_location(h, root)
        if library:
            body.append(f"\nin library code: {library}" + (f"  {h.library_site.code}" if h.library_site.code else ""), style="dim")
        sev = figures.severity(h.severity)
        table.add_row(Text(h.severity, style=sev.style if sev else ""), Group(Whole(body), *whole_parts(fix_text(body, h, root, repeats.get(i)))))
    return table


def fix_text(body: Text, h: Any, root: Path, same_as: str | None) -> list[Any]:
    """The written fix: its heading goes on ``body``; the before/after lines (a grid, so a
    long code line wraps beside its - or +, not under it) and the note are returned."""
    fix = figures.fix_of(h)
    if same_as:
        body.append(f"\nfix: the same as for {same_as}", style="dim")
        return []
    if fix is None:
        return []
    where = figures.fix_where(h, root)
    parts: list[Any] = []
    trial = verification_text(fix)
    if fix_state(fix) == FAILED:  # not a fix: what was tried, why it failed, and the rule
        return [Text(f"{trial}; the general rule is below", style="dim")]
    if fix.after:
        body.append(f"\n{fix_heading(fix)}{' at ' + where if where else ''}:", style="bold")
        diff = Table.grid(padding=(0, 1))
        diff.add_column(no_wrap=True)
        diff.add_column(overflow="fold")
        for mark, code, style in [("  -", fix.before, "red"), ("  +", fix.after, "green")]:
            for line in code.splitlines():  # at the file's indentation: an inserted line shows where it goes
                text = f"{fix.indent}{line}" if line else line
                diff.add_row(Text(mark, style=style), Whole(Text(text, style=style), indent=len(text) - len(text.lstrip())))
        parts.append(diff)
    note = fix_sentence(fix)
    if not fix.after and "The general rule:" in note:
        # The rule itself is printed once, under "How to fix, by kind", with all its lines.
        head = cannot_head(fix) or note.split(" The general rule:")[0].rstrip(".")
        parts.append(Text(cannot_line(fix) or f"{head}: the general rule is below", style="dim"))
        return parts
    parts.append(Text(note, style="dim"))
    if trial:
        parts.append(Text(trial_line(fix), style="green" if fix_state(fix) == VERIFIED else "dim"))
    return parts


def hints(report: Report, root: Path) -> Text | None:
    """Each kind's general rule once, with all the lines it applies to: one rule is not repeated per line."""
    groups = figures.shared_hints(sorted_hazards(report.hazards), root)
    if not groups:
        return None
    text = Text("How to fix, by kind", style="bold")
    for kind, locs, hint in groups:
        text.append(f"\n{kind}", style="bold")
        if locs:
            text.append(f" ({', '.join(locs)})", style="dim")
        text.append(f": {hint}")
    return text


def legend() -> Table:
    """``--explain``: the terms the report uses, one line each (launchprof.render.legend)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_header=False, title="Terms", title_justify="left")
    table.add_column("term", style="bold", overflow="fold")
    table.add_column("meaning", ratio=1, overflow="fold")
    for term, meaning in TERMS:
        table.add_row(term, meaning)
    return table


def _machine(report: Report, explain: bool) -> str:
    """The recording machine: GPU and torch by default, all of it (driver, CUDA, CPU, load) with ``explain``."""
    return figures.machine_line(report, full=explain)


class ConsoleRenderer(Renderer):
    format = "text"
    extension = ".txt"

    def renderables(self, report: Report) -> Group:
        root = report_root(report, self.options)
        title = "launchprof " + report.mode
        where = relative(report.script, root) + (f" · target {report.target}" if report.target else "")
        head = Text(where + "\n", style="dim")
        head.append_text(headline(report))
        parts: list[Any] = [Panel(Whole(head), title=title, title_align="left", border_style="dim")]
        if report.run and report.run.cause:
            parts.append(Text(f"stopped early: {report.run.cause}", style="bold red" if not report.run.complete else "yellow"))
        explain = self.options.explain
        table = numbers(report, explain)
        if table is not None:
            parts.append(table)
        parts += console_ranks(report)
        parts += console_buckets(report, root)
        graph = anatomy_line(report) if explain else None
        if graph:
            parts.append(Text(graph))
        parts += compile_console(report)
        parts += training_console(report, root, explain)
        cand = candidates(report, root)
        if cand is not None:
            parts.append(cand)
        hz = hazards(report, root)
        if hz is not None:
            parts.append(hz)
            rules = hints(report, root)
            if rules is not None:
                parts.append(rules)
        elif report.mode == "analyze" and report.verdict != "eager-only":
            parts.append(Text(figures.no_hazards(report), style="green" if report.run is None or report.run.complete else "yellow"))
        if report.mode == "lint":  # the counts a CI log's reader looks for, last before the notes
            counted = report.hazards if self.options.counted_hazards is None else self.options.counted_hazards
            blocking = any(h.severity != Severity.INFO for h in counted)
            parts.append(Text(figures.hazard_summary(counted), style="bold" if blocking else "green"))
        if self.options_snippet() and report.capture_snippet:
            parts.append(Text("Capture snippet (paste after the script's definitions)", style="bold"))
            parts.append(code_text(report.capture_snippet))
        for note in report_notes(report, explain):
            parts.append(Text(f"note: {note}", style="dim"))
        if explain:
            parts.append(legend())
        parts.append(Text(_machine(report, explain), style="dim"))
        return Group(*whole_parts(parts))

    def options_snippet(self) -> bool:
        """``--snippet``: the capture snippet in the terminal (Markdown and HTML always show it)."""
        return self.options.snippet

    def print(self, report: Report, console: Console) -> None:
        console.print(self.renderables(report), crop=False)  # code to paste runs past the width (code_text)

    def render(self, report: Report) -> str:
        buf = io.StringIO()
        target: TextIO = AsciiStream(buf) if self.options.ascii else buf
        console = Console(
            file=target,
            width=self.options.width,
            force_terminal=self.options.color,
            color_system="standard" if self.options.color else None,
            emoji=False,
        )
        console.print(self.renderables(report), crop=False)  # code to paste runs past the width (code_text)
        # rich pads every line to the width: a file or a CI log gets no trailing blanks.
        return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


class AsciiStream(StreamWrapper):
    """A text stream that announces itself as ASCII (so rich draws ASCII boxes) and spells
    every non-ASCII symbol written to it in ASCII before passing it on."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "ascii"

    def write(self, text: str) -> int:
        self._inner.write(fmt.to_ascii(text))
        return len(text)
