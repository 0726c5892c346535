"""The terminal report (rich): verdict and the three numbers that matter first, details below.

Fits one screen: a headline panel, a two-column table of eager vs replay, then hazards
ordered by severity with file:line and the fix.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from launchprof.render.base import Renderer
from launchprof.session import Report, Stats

VERDICT_STYLE = {
    "graphs-help": ("bold green", "CUDA graphs help"),
    "marginal": ("bold yellow", "CUDA graphs help a little (marginal)"),
    "graphs-dont-help": ("bold red", "CUDA graphs do not help"),
    "not-capturable": ("bold red", "not capturable as it is"),
    "eager-only": ("bold cyan", "eager profile only"),
    "static-only": ("bold cyan", "static check (no GPU run)"),
}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def us(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 10_000:
        return f"{value / 1000:.1f} ms"
    if value >= 1000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.1f} µs"


def stat(s: Stats | None) -> str:
    if s is None:
        return "—"
    return f"{us(s.median)}  [dim](p10 {us(s.p10)}, p90 {us(s.p90)}, n={s.n})[/]"


def mib(n: int | None) -> str:
    return "—" if n is None else f"{n / 2**20:.1f} MiB"


def headline(report: Report) -> Text:
    style, words = VERDICT_STYLE.get(report.verdict, ("bold", report.verdict))
    text = Text()
    text.append(f"{words}", style=style)
    text.append(f"  [{report.verdict}]", style="dim")
    parts: list[str] = []
    if report.speedup:
        s = report.speedup
        parts.append(f"speedup {s.median:.2f}x (95% CI {s.low:.2f}–{s.high:.2f})")
    if report.breakeven_replays is not None:
        parts.append(f"pays back instantiation after {report.breakeven_replays:.1f} replays")
    elif report.replay and report.speedup and report.speedup.median <= 1.0:
        parts.append("never pays back instantiation")
    if report.predicted_speedup is not None:
        lead = "fix the hazards and expect about" if report.verdict == "not-capturable" else "predicted"
        parts.append(f"{lead} {report.predicted_speedup:.1f}x")
    if report.eager and report.eager.kernels_per_step is not None:
        parts.append(f"{report.eager.kernels_per_step} kernels per step")
    if report.eager and report.eager.gpu_idle_fraction is not None:
        parts.append(f"GPU idle {report.eager.gpu_idle_fraction:.0%} of the eager step")
    if parts:
        text.append("\n" + " · ".join(parts))
    return text


def numbers(report: Report) -> Table | None:
    e, r = report.eager, report.replay
    if e is None and r is None:
        return None
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("", style="bold")
    table.add_column("eager")
    table.add_column("graph replay")
    table.add_row("step time (wall)", stat(e.step_us if e else None), stat(r.step_us if r else None))
    table.add_row("GPU span (events)", stat(e.gpu_span_us if e else None), stat(r.gpu_span_us if r else None))
    table.add_row(
        "kernels / graph nodes",
        str(e.kernels_per_step) if e and e.kernels_per_step is not None else "—",
        str(r.graph_nodes) if r and r.graph_nodes is not None else "—",
    )
    if e:
        table.add_row("GPU busy per step", us(e.gpu_busy_us), "")
        table.add_row("launch gap between kernels", stat(e.launch_gap_us), "")
        table.add_row("host launch API time", us(e.launch_api_us), "")
    if r:
        table.add_row("capture / instantiate", "", f"{us(r.capture_us)} / {us(r.instantiate_us)}")
        table.add_row("graph pool memory", "", mib(r.pool_bytes))
    if report.validation:
        v = report.validation
        diff = f", max |diff| {v.max_abs_diff:.3g}" if v.max_abs_diff is not None else ""
        table.add_row("replay vs eager", "", f"{v.matches}/{v.calls_compared} calls match{diff}")
    return table


def hazards(report: Report, root: Path | None) -> Table | None:
    if not report.hazards:
        return None
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title="Hazards (fix from the top)", title_justify="left")
    table.add_column("severity")
    table.add_column("where", no_wrap=True)
    table.add_column("what, and how to fix it", ratio=1)
    for h in report.hazards:
        where = "—"
        if h.file:
            where = _rel(h.file, root) + (f":{h.line}" if h.line else "")
        body = Text()
        body.append(f"{h.kind}: ", style="bold")
        body.append(h.message)
        body.append(f"\nfix: {h.hint}", style="dim")
        table.add_row(Text(h.severity, style=SEVERITY_STYLE.get(h.severity, "")), where, body)
    return table


def _rel(file: str, root: Path | None) -> str:
    base = (root or Path.cwd()).resolve()
    try:
        return str(Path(file).resolve().relative_to(base))
    except ValueError:
        return file


class ConsoleRenderer(Renderer):
    format = "text"
    extension = ".txt"

    def renderables(self, report: Report) -> Group:
        title = f"launchprof · {report.script}" + (f" · target {report.target}" if report.target else "")
        parts: list = [Panel(headline(report), title=title, title_align="left", border_style="dim")]
        if report.run and report.run.cause:
            parts.append(Text(f"stopped early: {report.run.cause}", style="bold red" if not report.run.complete else "yellow"))
        table = numbers(report)
        if table is not None:
            parts.append(table)
        if report.buckets:
            lines = [
                f"capture buckets for {b.argument} dim {b.dim}: {', '.join(map(str, b.sizes))} "
                f"(padding waste {b.padding_waste:.0%}" + (f", shared pool about {mib(b.pool_bytes_estimate)})" if b.pool_bytes_estimate else ")")
                for b in report.buckets
            ]
            parts.append(Text("\n".join(lines)))
        hz = hazards(report, self.options.source_root)
        if hz is not None:
            parts.append(hz)
        elif report.mode == "analyze" and report.verdict != "eager-only":
            parts.append(Text("No hazards found.", style="green"))
        for note in report.notes:
            parts.append(Text(f"note: {note}", style="dim"))
        m = report.machine
        parts.append(Text(f"{m.gpu or 'no GPU'} · driver {m.driver or '—'} · CUDA {m.cuda or '—'} · torch {m.torch or '—'} · Python {m.python}", style="dim"))
        return Group(*parts)

    def print(self, report: Report, console: Console) -> None:
        console.print(self.renderables(report))

    def render(self, report: Report) -> str:
        buf = io.StringIO()
        console = Console(file=buf, width=self.options.width, force_terminal=self.options.color, color_system="standard" if self.options.color else None)
        console.print(self.renderables(report))
        return buf.getvalue()
