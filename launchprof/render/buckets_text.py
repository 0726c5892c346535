"""The bucket plan (report.buckets) for the terminal, Markdown and HTML: a table per
capture size, the memory and speedup lines, whether padding is safe, and the plan as code
to paste. Formats only; the figures come from launchprof.analysis.bucket_advice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from launchprof.render.words import format as fmt
from launchprof.render.words.notes_text import note_text, report_notes
from launchprof.render.paths import relative

if TYPE_CHECKING:  # annotations only
    from launchprof.model.bucket_plan import BucketPlan

HEADER = ("Size", "Calls", "Capture + instantiate", "Replay", "Own pool", "Added to shared pool", "Padding")


def _ms(value: float | None) -> str:
    return fmt.NA if value is None else f"{value:.2f} ms"


def _padding(matches: bool | None) -> str:
    return {True: "same as eager", False: "DIFFERS", None: "not checked"}[matches]


def rows(plan: BucketPlan) -> list[tuple[str, ...]]:
    """One row per measured capture size, largest last; unmeasured plans have none."""
    return [
        (str(m.size), str(m.calls), _ms(m.capture_ms), fmt.duration(m.replay_us), fmt.size(m.pool_bytes),
         fmt.size(m.shared_added_bytes), _padding(m.matches))
        for m in plan.measured
    ]


def _where(plan: BucketPlan) -> str:
    return ", ".join(f"{a.argument} dim {a.dim}" for a in plan.arguments)


def lines(plan: BucketPlan, root: Any = None) -> list[str]:
    """The plan's sentences, in reading order (no markup)."""
    out = [f"Capture sizes for {_where(plan)}: {', '.join(map(str, plan.recommended))} ({note_text(plan.explanation_finding, plan.explanation) if plan.explanation_finding else plan.explanation})"]
    if plan.shared_pool_bytes is not None or plan.private_pool_bytes is not None:
        work = f"; one-time library workspace {fmt.size(plan.workspace_bytes)} apart" if plan.workspace_bytes else ""
        out.append(
            f"Memory: {fmt.size(plan.shared_pool_bytes)} in one shared pool captured largest first, against "
            f"{fmt.size(plan.private_pool_bytes)} in private pools{work}"
        )
    if plan.speedup is not None:
        s = plan.speedup
        out.append(f"Observed calls replayed through the plan (pad, replay, slice) against eager: {fmt.speedup(s.median, s.low, s.high)}")
    if plan.padding_safe is True:
        out.append("Padding is safe: every padded replay's real rows equal eager on the real inputs")
    elif plan.padding_safe is False:
        out.append("Padding is NOT safe: padded replays change the real rows' results")
        for leak in plan.leaks:
            file = relative(leak.file, root) if leak.file and root is not None else leak.file
            where = f" at {file}:{leak.line}" if file and leak.line else ""
            op = f" (`{leak.op}` over the padded dimension{where}: `{leak.code}`)" if leak.op else where
            out.append(f"  {leak.output} differs when a call of {leak.calls_size} is padded to {leak.size}{op}")
        if plan.fix:
            out.append(f"Fix: {note_text(plan.fix_finding, plan.fix) if plan.fix_finding else plan.fix}")
    return out + [f"note: {n}" for n in report_notes(plan)]


def console_buckets(report: Any, root: Any = None) -> list[Any]:
    """Rich renderables for the terminal (empty without a plan)."""
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable
    from launchprof.render.whole_text import code_text

    plan = report.buckets
    if plan is None:
        return []
    parts: list[Any] = []
    if plan.measured:  # a table, or one block per size where the terminal is too narrow for it
        cols = [Col(name, "left" if name == "Padding" else "right") for name in HEADER]
        table = rows(plan)
        styles = ["red" if row[-1] == "DIFFERS" else "" for row in table]
        parts.append(FittedTable(cols, table, title="Capture buckets, measured", styles=styles, title_justify="left"))
    for line in lines(plan, root):
        bad = line.startswith(("Padding is NOT", "Fix:", "  "))
        parts.append(Text(line, style="red" if bad else ("dim" if line.startswith("note:") else "")))
    parts.append(Text("Capture plan to paste:", style="bold"))
    parts.append(code_text(plan.snippet))
    return parts


def markdown_buckets(report: Any, root: Any = None) -> list[str]:
    """The Markdown section (empty list without a plan)."""
    from launchprof.render.markdown_escape import md_table, md_text

    plan = report.buckets
    if plan is None:
        return []
    parts = ["### Capture buckets"]
    if plan.measured:
        parts.append(md_table(HEADER, [tuple(md_text(c) for c in row) for row in rows(plan)]))
    parts.append("\n".join(f"- {md_text(line.strip())}" for line in lines(plan, root)))
    parts.append("Capture plan to paste:\n\n```python\n" + plan.snippet + "\n```")
    return ["\n\n".join(parts)]


def html_buckets(report: Any, root: Any = None) -> Markup | None:
    """The HTML section, escaped here (the template inserts it as is)."""
    plan = report.buckets
    if plan is None:
        return None
    html = ["<h2>Capture buckets</h2>"]
    if plan.measured:
        head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows(plan))
        html.append(f"<table><tr>{head}</tr>{body}</table>")
    html += [f"<p>{escape(line.strip())}</p>" for line in lines(plan, root)]
    html.append(f"<p>Capture plan to paste:</p><pre>{escape(plan.snippet)}</pre>")
    return Markup("\n".join(html))
