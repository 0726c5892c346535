"""``launchprof compare BASE.json NEW.json``: a table of deltas and a CI regression gate.

The comparison itself is data (:mod:`launchprof.compare`); this module parses the
rules, renders text (rich), Markdown or JSON, and turns tripped rules into exit 1.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from launchprof.compare import METRICS, Comparison, MetricDelta, compare, evaluate, parse_rule
from launchprof.errors import UsageError
from launchprof.outputs import plan_outputs, write_atomic
from launchprof.render.markdown import fmt_count, fmt_fraction, fmt_ratio, fmt_us, md_code, md_table, md_text
from launchprof.session import load_report

FORMATS = ("text", "json", "md")
_FORMAT_VALUE = {"us": fmt_us, "count": fmt_count, "fraction": fmt_fraction, "ratio": fmt_ratio}


@dataclass(frozen=True)
class CompareOptions:
    base: Path
    new: Path
    fail_on: tuple[str, ...]
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]


def run(options: CompareOptions) -> int:
    rules = [parse_rule(r) for r in options.fail_on]  # a bad rule fails before any file is read
    outputs = plan_outputs(list(options.formats), list(options.outputs), allowed=FORMATS)
    result = compare(load_report(options.base), load_report(options.new))
    tripped = evaluate(rules, result)
    stderr = Console(stderr=True, highlight=False, soft_wrap=True)
    if result.machine_differences:
        stderr.print(
            "[yellow]launchprof: warning:[/] the two reports were measured on different machines "
            f"({'; '.join(result.machine_differences)}): timings may not be comparable",
            markup=True,
        )
    labels = (str(options.base), str(options.new))
    for out in outputs:
        if out.path is not None:
            try:
                write_atomic(out.path, render(out.format, result, tripped, labels))
            except OSError as exc:
                raise UsageError(f"cannot write {out.path}: {exc.strerror or exc}") from None
    to_stdout = [o.format for o in outputs if o.path is None] or ["text"]
    if to_stdout[0] == "text":
        print_table(result, labels, Console())
    else:
        sys.stdout.write(render(to_stdout[0], result, tripped, labels))
    for reason in tripped:
        stderr.print(f"[bold red]launchprof: --fail-on[/] {reason}", markup=True)
    return 1 if tripped else 0


def render(fmt: str, result: Comparison, tripped: list[str], labels: tuple[str, str]) -> str:
    if fmt == "json":
        return json.dumps(to_json(result, tripped, labels), indent=2) + "\n"
    if fmt == "md":
        return to_markdown(result, tripped, labels)
    buf = io.StringIO()
    print_table(result, labels, Console(file=buf, width=100, color_system=None))
    return buf.getvalue()


# --- values -------------------------------------------------------------------------------


def value_text(metric: str, value: float | None) -> str:
    return _FORMAT_VALUE[METRICS[metric].unit](value)


def change_text(d: MetricDelta) -> str:
    """Relative change, except fractions, which move in percentage points."""
    if d.change is None:
        return "—"
    if d.change == 0:
        return "±0"
    if METRICS[d.metric].unit == "fraction":
        return f"{d.change * 100:+.1f} pp"
    rel = d.relative
    if rel is None or math.isinf(rel):
        return f"{d.change:+g}"
    return f"{rel * 100:+.1f}%"


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def to_json(result: Comparison, tripped: list[str], labels: tuple[str, str]) -> dict[str, Any]:
    metrics = {
        d.metric: {"base": d.base, "new": d.new, "change": d.change, "relative": _finite(d.relative), "worse": d.worse}
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
        "tripped": tripped,
    }


# --- text and Markdown ----------------------------------------------------------------------


def print_table(result: Comparison, labels: tuple[str, str], console: Console) -> None:
    table = Table(title=f"launchprof compare: {labels[0]} → {labels[1]}", title_justify="left")
    for name in ("Metric", "Base", "New", "Change"):
        table.add_column(name, justify="left" if name == "Metric" else "right")
    verdict_style = "red" if result.verdict_worse else ""
    table.add_row("Verdict", result.base_verdict, result.new_verdict, "worse" if result.verdict_worse else "", style=verdict_style)
    for d in result.deltas:
        style = {True: "red", False: "green", None: ""}[d.worse if d.change else None]
        table.add_row(METRICS[d.metric].label, value_text(d.metric, d.base), value_text(d.metric, d.new), change_text(d), style=style)
    console.print(table)
    for title, keys, style in (("added", result.hazards_added, "red"), ("removed", result.hazards_removed, "green")):
        console.print(f"[{style}]Hazards {title}: {len(keys)}[/]")
        for k in keys:
            console.print(f"  {k.severity} {k}: {k.message}", markup=False, highlight=False)


def to_markdown(result: Comparison, tripped: list[str], labels: tuple[str, str]) -> str:
    rows = [("Verdict", md_text(result.base_verdict), md_text(result.new_verdict), "worse ❌" if result.verdict_worse else "")]
    for d in result.deltas:
        mark = {True: " ❌", False: " ✅"}.get(d.worse, "") if d.change else ""
        rows.append((METRICS[d.metric].label, value_text(d.metric, d.base), value_text(d.metric, d.new), change_text(d) + mark))
    parts = [f"## launchprof compare: {md_code(labels[0])} → {md_code(labels[1])}", md_table(("Metric", "Base", "New", "Change"), rows)]
    for title, keys in (("added", result.hazards_added), ("removed", result.hazards_removed)):
        items = [f"- {md_code(k.kind)} at {md_code(f'{k.file}:{k.line}' if k.line else k.file or '(no file)')}: {md_text(k.message)}" for k in keys]
        parts.append(f"**Hazards {title}: {len(keys)}**" + ("\n\n" + "\n".join(items) if items else ""))
    if result.machine_differences:
        parts.append("> [!WARNING]\n> Measured on different machines: " + md_text("; ".join(result.machine_differences)))
    if tripped:
        parts.append("**Tripped `--fail-on` rules**\n\n" + "\n".join(f"- ❌ {md_text(reason)}" for reason in tripped))
    return "\n\n".join(parts) + "\n"
