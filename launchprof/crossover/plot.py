"""Draw the crossover curves: a PNG, an SVG string for HTML pages, and a small HTML page.

matplotlib with the Agg backend, so it draws on machines without a display (CI, GPU
boxes over ssh). Left panel: time per call against node count, eager dashed and replay
solid, one colour per kernel duration (latency mode). Right panel: the speedup, with
the break-even line at 1.
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

from launchprof.crossover.determined import not_determined
from launchprof.crossover.fit import fmt, kernel_durations
from launchprof.crossover.lines import curve
from launchprof.crossover.profile import DeviceProfile, Kind
from launchprof.errors import UsageError

PLOT_SUFFIXES = (".png", ".svg", ".html", ".htm")


def _figure(profile: DeviceProfile) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    durations = kernel_durations(profile.samples)
    colours = plt.get_cmap("viridis")
    for i, k in enumerate(durations):
        colour = colours(i / max(len(durations) - 1, 1))
        label = "empty" if k == 0 else f"{k:g} µs"
        eager = dict(curve(profile.samples, Kind.EAGER_LATENCY, k))
        graph = dict(curve(profile.samples, Kind.GRAPH_LATENCY, k))
        if eager:
            left.plot(list(eager), list(eager.values()), "--", color=colour, marker=".", linewidth=1)
        if graph:
            left.plot(list(graph), list(graph.values()), "-", color=colour, marker="o", markersize=3, label=label)
        both = sorted(set(eager) & set(graph))
        if both:
            right.plot(both, [eager[n] / graph[n] for n in both], "-", color=colour, marker="o", markersize=3, label=label)
    left.set(xscale="log", yscale="log", xlabel="kernels (graph nodes) per call", ylabel="µs per call (submit and wait)")
    left.set_title("eager (dashed) vs graph replay (solid)")
    right.axhline(1.0, color="grey", linewidth=1)
    right.set(xscale="log", xlabel="kernels (graph nodes) per call", ylabel="speedup: eager / replay")
    right.set_title("replay speedup by spin-kernel duration")
    if durations:
        right.legend(title="kernel", fontsize=8, title_fontsize=8)
    gpu = profile.machine.gpu or "unknown GPU"
    fig.suptitle(f"launchprof crossover: {gpu}" + (" (partial)" if profile.partial else ""), fontsize=11)
    return fig


def render_png(profile: DeviceProfile) -> bytes:
    import matplotlib.pyplot as plt

    fig = _figure(profile)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    return buffer.getvalue()


def render_svg(profile: DeviceProfile) -> str:
    """The curves as an inline ``<svg>`` element (no XML prologue), text kept as text."""
    import matplotlib
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig = _figure(profile)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.find("<svg") :]


def _figure_text(profile: DeviceProfile, name: str) -> str:
    value = getattr(profile, name)
    return not_determined(value) if value is not None and name in profile.undetermined else fmt(value, 3)


def render_html(profile: DeviceProfile) -> str:
    """A small self-contained page: the curves, the coefficients and the model sentence."""
    rows = [
        ("eager launch, torch op", "eager_op_us"),
        (f"eager launch, bare ({profile.raw_launch_method or '?'})", "raw_launch_us"),
        ("graph launch, fixed", "graph_launch_fixed_us"),
        ("graph, per node", "graph_node_us"),
        (f"floor per node ({profile.floor_kernel or '?'})", "floor_node_us"),
        ("capture per node", "capture_node_us"),
        ("instantiate per node", "instantiate_node_us"),
        ("instantiate, fixed part", "instantiate_fixed_us"),
        ("update in place per node", "update_node_us"),
        ("re-instantiate per node", "reinstantiate_node_us"),
    ]
    table = "".join(f"<tr><td>{html.escape(label)}</td><td>{html.escape(_figure_text(profile, name))}</td></tr>" for label, name in rows)
    cross = "".join(
        f"<tr><td>{c.kernel_us:g}</td><td>{c.nodes_crossover if c.nodes_crossover is not None else 'never'}</td>"
        f"<td>{c.nodes_crossover_torch_op if c.nodes_crossover_torch_op is not None else 'n/a'}</td>"
        f"<td>{'n/a' if c.gain_at_64_nodes is None else f'{c.gain_at_64_nodes:+.1%}'}</td></tr>"
        for c in profile.crossover
    )
    m = profile.machine
    title = f"launchprof crossover: {m.gpu or 'unknown GPU'}"
    stamp = f"driver {m.driver}, CUDA {m.cuda}, torch {m.torch}; measured {profile.created}" + (" (partial)" if profile.partial else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:right}}td:first-child{{text-align:left}}svg{{max-width:100%;height:auto}}</style>
</head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(stamp)}</p>
{render_svg(profile)}
<h2>Coefficients (µs, 95% interval)</h2><table>{table}</table>
<h2>Crossover (submit and wait)</h2>
<table><tr><th>kernel µs</th><th>nodes to beat eager (bare launches)</th><th>(torch ops)</th><th>gain at 64 nodes</th></tr>{cross}</table>
<p>{html.escape(profile.model)}</p>
</body></html>
"""


def check_plot_path(path: Path) -> None:
    """Fail before the sweep if the plot cannot be drawn to ``path``."""
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {path}: use a .png, .svg or .html file")


def write_plot(profile: DeviceProfile, path: Path) -> None:
    """Draw to ``path``: PNG, SVG, or an HTML page with the SVG inline, by extension."""
    from launchprof.fileio.output_files import write_output

    suffix = path.suffix.lower()
    check_plot_path(path)
    if suffix == ".png":
        write_output(path, render_png(profile))
    elif suffix == ".svg":
        write_output(path, render_svg(profile))
    else:
        write_output(path, render_html(profile))
