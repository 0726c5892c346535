"""One self-contained HTML page: numbers, kernel timelines, crossover plot, hazards with code.

Self-contained means it opens from an artifact store or an e-mail with no network:
inline CSS, inline SVG, no scripts. Everything that comes from user code, paths or
kernel names goes through jinja2's autoescape; the only markup inserted unescaped is
the SVG matplotlib draws from numbers and fixed labels.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from launchprof.crossover.replay_model import finite_median
from launchprof.render import figures
from launchprof.render.anatomy_text import anatomy_line, anatomy_svg
from launchprof.render.buckets_text import html_buckets
from launchprof.render.compile_text import compile_html
from launchprof.render.partial_text import training_html
from launchprof.render.words import format as fmt
from launchprof.render.legend import TERMS
from launchprof.render.words.notes_text import report_notes
from launchprof.render.renderer import Renderer
from launchprof.render.figures import machine_line
from launchprof.render.number_rows import key_numbers
from launchprof.render.paths import library_location, location, relative, report_root, sorted_hazards

if TYPE_CHECKING:  # annotations only: the device profile's module loads pydantic, which lint's reports skip
    from launchprof.crossover.profile import DeviceProfile
from launchprof.render.ranks import html_ranks
from launchprof.render.words.verify_text import fix_heading, fix_state, verification_text
from launchprof.model.hazard_records import Hazard
from launchprof.model.step_timing import KernelSpan
from launchprof.model.core import Report
from launchprof.common.source import around

fmt_us = fmt.duration
fmt_fraction = fmt.percent

PLOT_WIDTH = 900.0  # px of the timeline's drawing area
SNIPPET_CONTEXT = 3  # lines shown either side of a hazard when read from the file


@dataclass(frozen=True)
class Rect:
    x: float
    width: float
    kind: str
    title: str


@dataclass(frozen=True)
class Lane:
    label: str
    summary: str
    rects: list[Rect]


@dataclass(frozen=True)
class TimelineView:
    lanes: list[Lane]
    ticks: list[tuple[float, str]]  # (x px, label)


def _busy_us(spans: list[KernelSpan]) -> float:
    """Length of the union of the spans: overlapping kernels count once."""
    busy, end = 0.0, -math.inf
    for s in sorted(spans, key=lambda s: s.start_us):
        start, stop = max(s.start_us, end), s.start_us + s.dur_us
        if stop > start:
            busy += stop - start
        end = max(end, stop)
    return busy


def _nice_step(total: float, count: int = 6) -> float:
    raw = total / count
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def timeline_view(report: Report) -> TimelineView | None:
    """Both lanes on one time scale, each from its own first activity, so gaps compare."""
    tl = report.timeline
    lanes_in = [("eager", tl.eager), ("replay", tl.replay)] if tl else []
    lanes_in = [(label, spans) for label, spans in lanes_in if spans]
    if not lanes_in:
        return None
    spans_of = {label: (min(s.start_us for s in spans), max(s.start_us + s.dur_us for s in spans)) for label, spans in lanes_in}
    longest = max(stop - start for start, stop in spans_of.values()) or 1.0
    scale = PLOT_WIDTH / longest
    lanes = []
    for label, spans in lanes_in:
        start, stop = spans_of[label]
        span = stop - start
        idle = 1 - _busy_us(spans) / span if span > 0 else 0.0
        rects = [
            Rect(x=(s.start_us - start) * scale, width=max(s.dur_us * scale, 0.5), kind=s.kind, title=f"{s.name} · {fmt_us(s.dur_us)} at {fmt_us(s.start_us - start)}")
            for s in spans
        ]
        # Gaps of this one drawn call, not the report's "GPU idle" figure (a median over calls).
        lanes.append(Lane(label, f"{len(spans)} activities in {fmt_us(span)}; gaps {fmt_fraction(idle)} of this call", rects))
    step = _nice_step(longest)
    ticks = [(i * step * scale, fmt_us(i * step)) for i in range(int(longest // step) + 1)]
    return TimelineView(lanes, ticks)


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _crossover_points(profile: DeviceProfile) -> list[tuple[float, float]]:
    points = []
    for entry in profile.crossover:
        x, y = _finite(entry.kernel_us), _finite(entry.nodes_crossover)
        if x and y and x > 0 and y > 0:
            points.append((x, y))
    return sorted(points)


def _workload(report: Report) -> tuple[float | None, float | None]:
    """(kernel duration µs, nodes per step) of this workload, from what was measured."""
    eager, replay = report.eager, report.replay
    nodes = (replay and replay.graph_nodes) or (eager and eager.kernels_per_step) or None
    kernel = eager.kernel_us.median if eager and eager.kernel_us else None
    if kernel is None and eager and eager.gpu_busy_us and eager.kernels_per_step:
        kernel = eager.gpu_busy_us / eager.kernels_per_step
    return kernel, nodes


def crossover_svg(report: Report, profile: DeviceProfile | None) -> Markup | None:
    """The device's crossover curve and launch-cost model with this workload on them."""
    if profile is None:
        return None
    points = _crossover_points(profile)
    eager_op, node = finite_median(profile.eager_op_us), finite_median(profile.graph_node_us)
    fixed = finite_median(profile.graph_launch_fixed_us) or 0.0
    # The panel draws the launch costs the prediction used (at this run's host speed), not
    # those of whichever profile came with `report --profile`; older reports lack them.
    used = (report.prediction.launch_costs_us if report.prediction is not None else None) or {}
    host = report.prediction.host_scale if report.prediction is not None else None
    title = "Launch cost model (device profile)"
    if {"eager_op", "graph_node"} <= used.keys():
        eager_op, node, fixed = used["eager_op"], used["graph_node"], used.get("graph_launch", 0.0)
        title = "Launch cost model (the prediction's" + (f", profile × {host:.2f} for this host)" if host else ")")
    panels = int(bool(points)) + int(bool(eager_op and node))
    if panels == 0:
        return None
    import matplotlib
    from matplotlib.figure import Figure

    kernel, nodes = _workload(report)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "launchprof", "font.size": 9}):
        fig = Figure(figsize=(5.2 * panels, 3.6), layout="constrained")
        axes = list(fig.subplots(1, panels, squeeze=False)[0])
        if points:
            ax = axes.pop(0)
            xs, ys = zip(*points)
            ax.loglog(xs, ys, marker="o", color="#1f6feb", label="crossover (replay wins above)")
            top = max(max(ys), nodes or 0) * 4
            ax.fill_between(xs, ys, top, color="#1f6feb", alpha=0.08)
            if kernel and nodes:
                ax.loglog([kernel], [nodes], marker="*", markersize=14, color="#d1242f", linestyle="none", label="this workload")
            ax.set_ylim(top=top)
            ax.set(xlabel="kernel duration (µs)", ylabel="graph nodes per step", title="Where replay beats eager")
            ax.legend(loc="best")
        if eager_op and node:
            ax = axes.pop(0)
            top = max(1024.0, 4.0 * (nodes or 1))
            n = [2 ** (i / 4) for i in range(int(4 * math.log2(top)) + 1)]
            ax.loglog(n, [eager_op * k for k in n], color="#9a6700", label=f"eager: {eager_op:.2f} µs × N")
            ax.loglog(n, [fixed + node * k for k in n], color="#1f6feb", label=f"replay: {fixed:.1f} + {node:.2f} µs × N")
            if nodes:
                ax.axvline(nodes, color="#d1242f", linestyle="--", label=f"this workload: {nodes:,} nodes")
            ax.set(xlabel="kernels (nodes) per step", ylabel="launch cost per step (µs)", title=title)
            ax.legend(loc="best")
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buf.getvalue()
    return Markup(svg[svg.index("<svg") :])  # drop the XML prolog and DOCTYPE (it names a DTD URL)


def snippet(hazard: Hazard, root: Path) -> list[tuple[int, str, bool]]:
    """Source lines around the hazard: as recorded at analysis time, else read from the file."""
    recorded = hazard.details.get("snippet")
    if isinstance(recorded, list) and recorded:
        rows = [(e[0], str(e[1]), e[0] == hazard.line) for e in recorded if isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[0], int)]
        if rows:
            return rows
    if not hazard.file or not hazard.line:
        return []
    path = Path(hazard.file)
    if not path.is_absolute():
        path = root / path
    return [(n, text, n == hazard.line) for n, text in around(str(path), hazard.line, SNIPPET_CONTEXT)]


class HtmlRenderer(Renderer):
    format = "html"
    extension = ".html"

    def render(self, report: Report) -> str:
        env = Environment(loader=PackageLoader("launchprof.render", "templates"), autoescape=True, trim_blocks=True, lstrip_blocks=True)
        root = report_root(report, self.options)
        ordered = sorted_hazards(report.hazards)
        repeats = figures.same_fix_as(ordered, root)
        hazards = [
            {
                "h": h, "location": location(h, root), "snippet": snippet(h, root), "message": figures.hazard_message(h, report),
                "library": library_location(h, root),
                "fix": figures.fix_of(h), "fix_where": figures.fix_where(h, root), "same_as": repeats.get(i),
                "fix_state": fix_state(figures.fix_of(h)), "fix_heading": fix_heading(figures.fix_of(h)), "trial": verification_text(figures.fix_of(h)),
            }
            for i, h in enumerate(ordered)
        ]
        label, sentence = figures.verdict_headline(report)
        return env.get_template("report.html.j2").render(
            report=report,
            script=relative(report.script, root),
            label=label,
            sentence=sentence,
            details=figures.detail_lines(report) if report.mode != "lint" else [],
            numbers=key_numbers(report) if report.mode != "lint" else [],
            timeline=timeline_view(report),
            plot_width=PLOT_WIDTH,
            crossover=crossover_svg(report, self.options.device_profile),
            graph_line=anatomy_line(report),
            ranks=html_ranks(report),
            graph_svg=anatomy_svg(report),
            compile_section=compile_html(report),
            training_section=training_html(report, root),
            hazards=hazards,
            hints=figures.shared_hints(ordered, root),
            machine=machine_line(report),
            notes=report_notes(report),
            fmt_fraction=fmt_fraction,
            terms=TERMS,
            buckets=html_buckets(report, root),
        )
