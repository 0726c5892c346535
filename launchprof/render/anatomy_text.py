"""The captured graph's anatomy for the renderers: one line of text, and an SVG drawing.

Small graphs (their nodes kept in the report) are drawn in full, level by level from the
roots, the critical path in bold; larger ones as one bar per level, its length the number
of nodes that could run at once. Kernel names only appear escaped, inside ``<title>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from launchprof.render.words import format as fmt

if TYPE_CHECKING:  # annotations only
    from launchprof.model.step_timing import Anatomy
    from launchprof.model.core import Report

COLORS = {"kernel": "#4c78a8", "memcpy": "#f58518", "memset": "#54a24b", "event_record": "#b279a2", "wait_event": "#b279a2"}
COL_W, ROW_H, R = 70.0, 34.0, 11.0


def anatomy_of(report: Report) -> Anatomy | None:
    return report.replay.anatomy if report.replay is not None else None


def anatomy_line(report: Report) -> str | None:
    """One line: nodes by type, edges, roots and leaves, critical path, widest level."""
    a = anatomy_of(report)
    if a is None:
        return None
    total = sum(a.nodes_by_type.values())
    types = ", ".join(f"{t} {n}" for t, n in sorted(a.nodes_by_type.items(), key=lambda kv: -kv[1]))
    line = f"graph: {total} nodes ({types})"
    if a.edges is None:
        return line + "; its edges could not be read"
    line += f", {a.edges} edges, {a.roots} root(s), {a.leaves} leaf/leaves; critical path {a.critical_path_nodes} nodes"
    if a.critical_path_us is not None and a.total_us:
        line += f", {fmt.duration(a.critical_path_us)} of {fmt.duration(a.total_us)} node time"
    return line + f"; widest level {a.max_width} node(s) at once"


def anatomy_svg(report: Report) -> Markup | None:
    a = anatomy_of(report)
    if a is None or not a.levels:
        return None
    return _full(a) if a.nodes else _by_level(a)


def _full(a: Anatomy) -> Markup:
    rows: dict[int, int] = {}
    pos: dict[int, tuple[float, float]] = {}
    for n in a.nodes:
        row = rows.get(n.level, 0)
        rows[n.level] = row + 1
        pos[n.id] = (20 + R + n.level * COL_W, 20 + R + row * ROW_H)
    on_path = set(a.critical_path)
    path_edges = set(zip(a.critical_path, a.critical_path[1:], strict=False))
    width = 40 + 2 * R + COL_W * (len(a.levels) - 1)
    height = 40 + 2 * R + ROW_H * (max(a.levels) - 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" role="img" aria-label="captured graph">']
    for src, dst in a.edge_list:
        (x1, y1), (x2, y2) = pos[src], pos[dst]
        bold = (src, dst) in path_edges
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#333" stroke-width="{2.5 if bold else 1}"/>')
    for n in a.nodes:
        x, y = pos[n.id]
        color = COLORS.get(n.type, "#999")
        ring = ' stroke="#d62728" stroke-width="3"' if n.id in on_path else ' stroke="#333"'
        tip = f"#{n.id} {n.type}" + (f" {n.name}" if n.name else "") + (f" · {fmt.duration(n.us)}" if n.us is not None else "")
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{R}" fill="{color}"{ring}><title>{escape(tip)}</title></circle>')
    out.append("</svg>")
    return Markup("".join(out))


def _by_level(a: Anatomy) -> Markup:
    widest = max(a.levels)
    bar_w = 600.0
    height = 20 + 14 * len(a.levels)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{bar_w + 120:.0f}" height="{height}" role="img" aria-label="graph levels">']
    for i, count in enumerate(a.levels):
        w = max(bar_w * count / widest, 1.0)
        out.append(
            f'<rect x="80" y="{10 + 14 * i}" width="{w:.1f}" height="11" fill="#4c78a8"><title>level {i}: {count} node(s)</title></rect>'
            f'<text x="74" y="{20 + 14 * i}" text-anchor="end" font-size="10">level {i}</text>'
        )
    out.append("</svg>")
    return Markup("".join(out))
