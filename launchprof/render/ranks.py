"""The multi-GPU part of a combined report (``report.ranks``, ``report.rank_skew``), for every format.

One table of ranks (how each ended, its verdict, step times, collectives, graph memory), the
skew between ranks, and what a rank that failed left behind (its cause, last events and
output). The words and numbers are made here once, through :mod:`launchprof.render.words.format`;
each renderer calls one function of this module for its own markup. A single-GPU report
has no ``ranks`` and gets nothing from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from launchprof.render.words import format as fmt

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report

HEADER = ("rank", "status", "verdict", "eager step", "replay step", "speedup", "kernels / nodes", "collectives eager / graph", "graph memory", "workspace", "hazards")


def _pair(a: Any, b: Any) -> str:
    return f"{fmt.count(a)} / {fmt.count(b)}"


def rank_rows(report: Report) -> list[tuple[str, ...]]:
    """One row per rank, in HEADER's order."""
    return [
        (
            str(s.rank), s.status, s.verdict or fmt.NA, fmt.duration(s.eager_step_us), fmt.duration(s.replay_step_us),
            fmt.ratio(s.speedup), _pair(s.kernels_per_step, s.graph_nodes), _pair(s.collectives_per_step, s.collectives_captured),
            fmt.size(s.pool_bytes), fmt.size(s.workspace_bytes), str(s.hazards),
        )  # fmt: skip
        for s in report.ranks or []
    ]


def skew_lines(report: Report) -> list[str]:
    """The spread between the slowest and fastest rank, per side, and who straggles."""
    out = []
    for k in report.rank_skew or []:
        late = f"; straggler(s): rank {', '.join(map(str, k.stragglers))}" if k.stragglers else "; no straggler (none over 10% above the median rank)"
        out.append(
            f"{k.side} step: slowest rank {k.slowest_rank} ({fmt.duration(k.slowest_us)}), fastest rank {k.fastest_rank} "
            f"({fmt.duration(k.fastest_us)}), spread {fmt.percent(k.spread)}{late}"
        )
    return out


def failure_lines(report: Report) -> list[str]:
    """Each rank that did not end well: why, its exit, its last events and output lines."""
    out = []
    for s in report.ranks or []:
        if s.status == "ok":
            continue
        exit_ = s.signal or (f"exit status {s.exit_code}" if s.exit_code is not None else "exit unknown")
        text = f"rank {s.rank} ({s.status}, {exit_}): {s.cause or 'no cause recorded'}"
        if s.last_events and s.status in ("died", "stopped", "timed-out", "interrupted"):
            text += "; last events: " + " | ".join(s.last_events)
        if s.output_tail:
            text += "; last output: " + " | ".join(s.output_tail[-3:])
        if s.run_file:
            text += f"; run file {s.run_file}"
        out.append(text)
    return out


def ranks_title(report: Report) -> str:
    return f"Ranks ({len(report.ranks or [])}): the slowest rank sets the step time"


def console_ranks(report: Report) -> list[Any]:
    """rich renderables for the terminal: the table, then skew and failures as lines."""
    if not report.ranks:
        return []
    from rich import box
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable

    # Eleven columns do not fit 80: the figures of a rank share one wrapped cell, each with its name.
    rows = []
    for row in rank_rows(report):
        figures = " · ".join(f"{name} {value}" for name, value in zip(HEADER[3:], row[3:], strict=True))
        rows.append([*row[:3], figures])
    cols = [Col(name) for name in ("rank", "status", "verdict", "figures")]
    table = FittedTable(cols, rows, title=ranks_title(report), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left")
    return [table, *(Text(line) for line in skew_lines(report)), *(Text(line, style="red") for line in failure_lines(report))]


def markdown_ranks(report: Report, md_text: Any, md_table: Any) -> list[str]:
    """Markdown sections; the caller's escaping and table helpers keep one Markdown dialect."""
    if not report.ranks:
        return []
    rows = [tuple(md_text(cell) for cell in row) for row in rank_rows(report)]
    parts = [f"### {md_text(ranks_title(report))}\n\n" + md_table(HEADER, rows)]
    parts += [f"> {md_text(line)}" for line in skew_lines(report)]
    parts += [f"- :x: {md_text(line)}" for line in failure_lines(report)]
    return parts


def html_ranks(report: Report) -> Markup | None:
    """An HTML section (escaped here, inserted as is by the template)."""
    if not report.ranks:
        return None
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rank_rows(report))
    lines = "".join(f"<p>{escape(line)}</p>" for line in skew_lines(report))
    lines += "".join(f'<p class="warn">{escape(line)}</p>' for line in failure_lines(report))
    return Markup(f"<h2>{escape(ranks_title(report))}</h2>\n<table><tr>{head}</tr>{body}</table>\n{lines}\n")


def sarif_ranks(report: Report) -> dict[str, Any]:
    """Run properties for SARIF: each rank's summary and the skew, as in the JSON report."""
    if not report.ranks:
        return {}
    return {
        "ranks": [{"rank": s.rank, "status": s.status, "verdict": s.verdict, "cause": s.cause} for s in report.ranks],
        "rankSkew": skew_lines(report),
    }


def rank_checks(report: Report) -> list[tuple[str, str, str]]:
    """JUnit: one check per rank, ``(name, status, reason)``; a rank that did not end well fails."""
    out = []
    for s in report.ranks or []:
        failed = s.status != "ok"
        out.append((f"rank {s.rank}", "failed" if failed else "passed", (s.cause or s.status) if failed else ""))
    return out
