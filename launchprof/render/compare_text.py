"""The compare renderers: text (rich), json and md, from one :class:`~launchprof.analysis.comparison.Comparison`.

Every format carries the same facts: the metric table with each step time's significance,
hazards added and removed, one warning line per way the runs differ in kind, the rules that
tripped and those whose threshold was exceeded within noise. ``FORMATS`` is what
``compare --help`` lists and what ``-f`` accepts, so the two cannot disagree.

Terminals and CI logs that cannot encode ``→`` or ``µ`` get ASCII symbols
(``render/format.to_ascii``); the command writes through ``commands/emit.py``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from launchprof.analysis.comparison import METRICS, Comparison, GateResult, MetricDelta, p_text
from launchprof.render.words import format as fmt
from launchprof.render.fitted import Col, FittedTable
from launchprof.render.words.format import to_ascii
from launchprof.render.markdown import md_code, md_table, md_text
from launchprof.render.whole_text import Whole

FORMATS = ("text", "json", "md")
NA = fmt.NA

_FORMAT_VALUE = {"us": fmt.duration, "count": fmt.count, "fraction": fmt.percent, "ratio": fmt.ratio}


# How a report obtained a figure, as the compare table says it (model.step_timing's bases).
BASIS_WORDS = {"profiled": "profiled", "graph-nodes": "graph nodes", "events": "CUDA events"}
# The launch gap is a median where profiled, a mean where read from CUDA events.
_GAP_KIND = {"profiled": "median", "events": "mean"}


def basis_words(basis: str) -> str:
    return BASIS_WORDS.get(basis, basis)


def metric_label(d: MetricDelta) -> str:
    """The metric's label, with how both reports obtained it where that is not profiled (the
    change column says it where the two differ)."""
    label = METRICS[d.metric].label
    base, new = d.bases
    if base != new:
        return label
    if d.metric == "launch_gap_us":
        return f"{label} ({basis_words(base)}, {_GAP_KIND.get(base, 'mean')})"
    return label if base == "profiled" else f"{label} ({basis_words(base)})"


def value_text(metric: str, value: float | None) -> str:
    return _FORMAT_VALUE[METRICS[metric].unit](value)


def change_text(d: MetricDelta) -> str:
    """Relative change, except fractions, which move in percentage points; nothing between
    figures obtained in different ways."""
    if not d.comparable:
        return f"not compared: {d.bases[0]} vs {d.bases[1]}"
    if d.change is None:
        return NA
    if d.change == 0:
        return "±0"
    if METRICS[d.metric].unit == "fraction":
        return f"{d.change * 100:+.1f} pp"
    rel = d.relative
    if rel is None or math.isinf(rel):
        return f"{d.change:+g}"
    return fmt.percent(rel, sign=True)


def significance_text(d: MetricDelta) -> str:
    """'' for metrics without samples; else significant / not significant (p) / not tested."""
    sig = d.significance
    if sig is None:
        return ""
    if sig.significant is None:
        return "not tested"
    word = "significant" if sig.significant else "not significant"
    return f"{word} ({p_text(sig.p_value or 0.0)})"


def basis_warnings(result: Comparison) -> list[str]:
    """One line per metric the two reports obtained in different ways."""
    return [
        f"{d.metric} not compared: the base report has it {basis_words(d.bases[0])}, the new one {basis_words(d.bases[1])} "
        "(analyze both with --kernels to profile them alike)"
        for d in result.not_compared
    ]


def untested_note(result: Comparison) -> str | None:
    """One line naming the measured step times that could not be tested (old reports, few samples)."""
    untested = [d for d in result.deltas if d.significance and d.significance.reason and d.change is not None]
    if not untested:
        return None
    names = ", ".join(d.metric for d in untested)
    reasons = "; ".join(sorted({d.significance.reason for d in untested if d.significance and d.significance.reason}))
    return f"significance of {names} could not be tested ({reasons}): judged by the threshold alone"


# --- the three formats -----------------------------------------------------------------------


def render(fmt: str, result: Comparison, gate: GateResult, labels: tuple[str, str], ascii_only: bool = False) -> str:
    """The comparison as ``fmt`` (one of :data:`FORMATS`), for a file or standard output."""
    if fmt == "json":
        return json.dumps(to_json(result, gate, labels), indent=2) + "\n"  # ensure_ascii: safe anywhere
    if fmt == "md":
        text = to_markdown(result, gate, labels)
        return to_ascii(text) if ascii_only else text
    buf = io.StringIO()
    print_text(result, gate, labels, Console(file=buf, width=110, color_system=None), ascii_only=ascii_only)
    return buf.getvalue()


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _significance_json(d: MetricDelta) -> dict[str, Any] | None:
    if d.significance is None:
        return None
    data = dataclasses.asdict(d.significance)
    data["tested"] = d.significance.significant is not None
    return data


def to_json(result: Comparison, gate: GateResult, labels: tuple[str, str]) -> dict[str, Any]:
    metrics = {
        d.metric: {
            "base": d.base, "new": d.new, "change": d.change, "relative": _finite(d.relative), "worse": d.worse,
            "significance": _significance_json(d), "bases": {"base": d.bases[0], "new": d.bases[1]}, "compared": d.comparable,
        }
        for d in result.deltas
    }
    return {
        "base": labels[0],
        "new": labels[1],
        "verdict": {"base": result.base_verdict, "new": result.new_verdict, "worse": result.verdict_worse},
        "metrics": metrics,
        "hazards_added": [dataclasses.asdict(k) for k in result.hazards_added],
        "hazards_removed": [dataclasses.asdict(k) for k in result.hazards_removed],
        "machine_differences": result.machine_differences,
        "warnings": result.warnings,
        "not_compared": basis_warnings(result),
        "significance_note": untested_note(result),
        "tripped": gate.tripped,
        "within_noise": gate.within_noise,
    }


def _row_style(d: MetricDelta) -> str:
    if not d.change or d.not_significant:
        return ""
    return "red" if d.worse else "green"


def print_text(result: Comparison, gate: GateResult, labels: tuple[str, str], console: Console, ascii_only: bool = False) -> None:
    """The metric table (one line per metric where the table would not fit) and its notes;
    ``ascii_only`` for a terminal that cannot show ``→``. Prose wraps with figures whole."""
    t = to_ascii if ascii_only else (lambda s: s)
    cols = [Col("Metric"), Col("Base", "right"), Col("New", "right"), Col("Change", "right"), Col("Significance")]
    rows = [("Verdict", result.base_verdict, result.new_verdict, "worse" if result.verdict_worse else "", "")]
    rows += [(metric_label(d), value_text(d.metric, d.base), value_text(d.metric, d.new), change_text(d), significance_text(d)) for d in result.deltas]
    styles = ["red" if result.verdict_worse else ""] + [_row_style(d) for d in result.deltas]
    title = t(f"launchprof compare: {labels[0]} → {labels[1]}")
    block = lambda row, style: metric_line(row, style, t("→"))  # noqa: E731
    console.print(FittedTable(cols, [[t(c) for c in r] for r in rows], title=title, styles=styles, block=block, title_justify="left"))
    note = untested_note(result)
    if note:
        console.print(Whole(t(f"Note: {note}")))
    for title, keys, style in (("added", result.hazards_added, "red"), ("removed", result.hazards_removed, "green")):
        console.print(f"[{style}]Hazards {title}: {len(keys)}[/]")
        if keys:  # wrapped to the terminal, under a severity column (a hanging indent)
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True)
            grid.add_column(ratio=1)
            for k in keys:
                grid.add_row(Text(str(k.severity)), Whole(t(f"{k}: {k.message}")))
            console.print(Padding(grid, (0, 0, 0, 2)), highlight=False)
    for warning in result.warnings:
        console.print(Whole(t(f"warning: {warning}: timings may not be comparable"), style="yellow"))
    for line in basis_warnings(result):
        console.print(Whole(t(f"warning: {line}"), style="yellow"))
    for line in gate.within_noise:
        console.print(Whole(t(f"within noise: {line}")))


def metric_line(row: list[str], style: str, arrow: str) -> Whole:
    """A metric as one line, for a terminal too narrow for the table:
    "Eager step  97.1 µs → 99.0 µs  +2.0%  not significant (p = 0.31)"."""
    label, base, new, change, significance = row
    text = Text(label, style=f"bold {style}".strip())
    text.append("  " + "  ".join(x for x in (f"{base} {arrow} {new}", change, significance) if x), style=style or None)
    return Whole(text, indent=2)


def to_markdown(result: Comparison, gate: GateResult, labels: tuple[str, str]) -> str:
    rows = [("Verdict", md_text(result.base_verdict), md_text(result.new_verdict), "worse ❌" if result.verdict_worse else "", "")]
    for d in result.deltas:
        mark = "" if not d.change or d.not_significant else {True: " ❌", False: " ✅"}.get(d.worse, "")
        rows.append((md_text(metric_label(d)), value_text(d.metric, d.base), value_text(d.metric, d.new), change_text(d) + mark, significance_text(d)))
    header = ("Metric", "Base", "New", "Change", "Significance")
    parts = [f"## launchprof compare: {md_code(labels[0])} → {md_code(labels[1])}", md_table(header, rows)]
    note = untested_note(result)
    if note:
        parts.append(f"_{md_text(note)}_")
    for title, keys in (("added", result.hazards_added), ("removed", result.hazards_removed)):
        items = [f"- {md_code(k.kind)} at {md_code(f'{k.file}:{k.line}' if k.line else k.file or '(no file)')}: {md_text(k.message)}" for k in keys]
        parts.append(f"**Hazards {title}: {len(keys)}**" + ("\n\n" + "\n".join(items) if items else ""))
    if result.warnings:
        lines = "\n".join(f"> - {md_text(w)}" for w in result.warnings)
        parts.append(f"> [!WARNING]\n> The two runs differ; timings may not be comparable:\n>\n{lines}")
    if result.not_compared:
        lines = "\n".join(f"> - {md_text(w)}" for w in basis_warnings(result))
        parts.append(f"> [!WARNING]\n> Figures obtained in different ways are not compared:\n>\n{lines}")
    if gate.within_noise:
        parts.append("**Within noise (not counted)**\n\n" + "\n".join(f"- {md_text(line)}" for line in gate.within_noise))
    if gate.tripped:
        parts.append("**Tripped `--fail-on` rules**\n\n" + "\n".join(f"- ❌ {md_text(reason)}" for reason in gate.tripped))
    return "\n\n".join(parts) + "\n"
