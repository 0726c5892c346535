"""A training step that did not capture whole, in every format: what launchprof detached so
that it could (``assumes_fix``), and the step with its largest module graphed alone
(``partial_capture``). Rows and lines are built once here, with their words from
launchprof.render.words.training_text; the console, Markdown and HTML renderers each call
one function.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from launchprof.render.paths import relative
from launchprof.render.words import training_text as words

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report


def _where(file: str | None, line: int | None, root: Path) -> str | None:
    if not file:
        return None
    return f"{relative(file, root)}:{line}" if line else relative(file, root)


def released_lines(report: Report, root: Path) -> list[str]:
    """One sentence per fix launchprof made for the measurement."""
    return [words.released_sentence(f, [_where(v.file, v.line, root) for v in f.variables]) for f in report.assumes_fix or []]


def partial_rows(report: Report, root: Path) -> list[tuple[str, str]] | None:
    p = report.partial_capture
    if p is None or p.status != "measured":
        return None
    return words.partial_rows(p, _where(p.file, p.line, root))


def partial_lines(report: Report, root: Path) -> list[str]:
    """Under the rows: why nothing was measured, or which modules were not and the fix the
    figures assume."""
    p = report.partial_capture
    if p is None:
        return []
    places = [_where(c.file, c.line, root) for c in p.candidates]
    if p.status != "measured":
        return words.not_measured_lines(p, places)
    return words.measured_lines(report, places)


def _parts(report: Report, root: Path) -> tuple[list[str], str | None, list[tuple[str, str]] | None, list[str]]:
    p = report.partial_capture
    title = words.partial_title(p) if p is not None else None
    return released_lines(report, root), title, partial_rows(report, root), partial_lines(report, root)


def nothing_to_try(report: Report) -> bool:
    """A partial capture that found no module to graph: nothing the user can act on (the
    step calls no module with parameters; other reasons say what stood in the way)."""
    p = report.partial_capture
    return p is not None and p.status != "measured" and not p.candidates and p.reason == "no-module"


def training_console(report: Report, root: Path, explain: bool = True) -> list[Any]:
    """The released graphs and the partial capture; without ``explain``, a partial capture
    that found no module to graph is left out (the step is no training step to split)."""
    from rich import box
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable
    from launchprof.render.whole_text import code_text

    released, title, rows, lines = _parts(report, root)
    if not explain and nothing_to_try(report):
        title, rows, lines = None, None, []
    out: list[Any] = [Text(line, style="yellow") for line in released]
    if title is not None:
        out.append(Text(title, style="bold"))
    if rows:
        out.append(FittedTable([Col("figure", style="bold", least=20), Col("value")], [list(r) for r in rows], box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_header=False))
    out += [Text(line) for line in lines]
    p = report.partial_capture
    if p is not None and p.snippet:
        out += [Text(words.snippet_caption(p), style="dim"), code_text(p.snippet)]
    return out


def training_markdown(report: Report, root: Path) -> list[str]:
    from launchprof.render.markdown_escape import md_table, md_text

    released, title, rows, lines = _parts(report, root)
    out = [f"> [!NOTE]\n> {md_text(line)}" for line in released]
    if title is not None:
        out.append(f"### {md_text(title)}")
    if rows:
        out.append(md_table(("Measure", "Value"), [(md_text(a), md_text(b)) for a, b in rows]))
    if lines:
        out.append("\n".join(f"- {md_text(line)}" for line in lines))
    p = report.partial_capture
    if p is not None and p.snippet:
        out.append(f"{md_text(words.snippet_caption(p))}\n\n```python\n{p.snippet.rstrip()}\n```")
    return out


def training_html(report: Report, root: Path) -> Markup | None:
    released, title, rows, lines = _parts(report, root)
    if not released and title is None:
        return None
    parts = [f'<p class="warn">{escape(line)}</p>' for line in released]
    if title is not None:
        parts.append(f"<h2>{escape(title)}</h2>")
    if rows:
        body = "".join(f"<tr><th>{escape(a)}</th><td>{escape(b)}</td></tr>" for a, b in rows)
        parts.append(f'<table class="partial">{body}</table>')
    if lines:
        parts.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    p = report.partial_capture
    if p is not None and p.snippet:
        parts.append(f"<p>{escape(words.snippet_caption(p))}</p>\n<pre class=\"fix\">{escape(p.snippet)}</pre>")
    return Markup("\n".join(parts))
