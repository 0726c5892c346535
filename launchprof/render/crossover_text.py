"""The crossover command's renderers: the device profile as rich tables, or as JSON.

Presentation only (every renderer lives in ``render/``): the profile is
already fitted; this module decides how its figures, their intervals, the spread across
rounds and the noisy flag are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from launchprof.crossover.profile import DeviceProfile, Interval


def render_json(profile: DeviceProfile) -> str:
    """The profile file's JSON, exactly as it is cached (one definition of every figure)."""
    return profile.to_json()


def sweep_time_line(elapsed_s: float, phase_s: Sequence[tuple[str, float]]) -> str:
    """``sweep took 5.2 s (calibrate 0.3, host rounds 0.9, ...)``: where a sweep's time went."""
    phases = ", ".join(f"{name} {seconds:.1f}" for name, seconds in phase_s)
    return f"sweep took {elapsed_s:.1f} s" + (f" ({phases})" if phases else "")


def _cell(value: Interval | None, digits: int = 2, undetermined: bool = False) -> tuple[str, str]:
    if value is None:
        return "n/a", ""
    if undetermined:  # two significant figures and a "~": the sweep does not pin this one down
        from launchprof.crossover.determined import rough

        return f"~{rough(value.median)}", f"{rough(value.low)} – {rough(value.high)} (not determined)"
    return f"{value.median:.{digits}f}", f"{value.low:.{digits}f} – {value.high:.{digits}f}"


def _with_interval(median: float, low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None:
        return f"{median:.{digits}f}"
    return f"{median:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def _undetermined_line(what: str, name: str, value: Interval) -> str:
    """``instantiate, fixed part ~9.9 µs (not determined by this sweep: 95% CI 2.5–41 µs)``."""
    from launchprof.crossover.determined import not_determined

    return f"[yellow]{what}[/] {not_determined(value, '' if name == 'kernel_scale' else ' µs')}"


def _spread(p: DeviceProfile, name: str) -> str:
    value = p.spread.get(name)
    return "" if value is None else f"{value:.0%}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1%}"


def _nodes(value: int | None) -> str:
    return "never" if value is None else str(value)


def print_profile(p: DeviceProfile, console: Console) -> None:
    """The coefficients, the crossover, the amortisation and the model: rich tables, or one
    block per row on a terminal too narrow for a table (render/fitted.py); prose wraps with
    every figure and interval whole (render/whole.py)."""
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable
    from launchprof.render.whole_text import Whole

    m = p.machine
    flags = (" · PARTIAL" if p.partial else "") + (" · NOISY" if p.noisy else "") + (" · quick" if p.quick else "")
    title = f"{m.gpu} · driver {m.driver} · CUDA {m.cuda} · torch {m.torch}{flags}"
    coef_cols = [Col("coefficient"), Col("µs", "right"), Col("95% interval", "right"), Col("spread across rounds", "right")]
    console.print(FittedTable(coef_cols, _coefficients(p), title=title, block=_coefficient_line))
    for line in _undetermined_lines(p):
        console.print(Whole(Text.from_markup(line)))
    if p.noisy:
        console.print(Whole(Text.from_markup("[bold yellow]Noisy profile:[/] ") + Text(str(p.noisy_reason))))
    headers = ("kernel µs", "wins from (bare)", "wins from (torch op)", "gain @64 (bare)", "gain @64 (torch op)", "wins from, back to back")
    throughput = {c.kernel_us: c for c in p.crossover_throughput}
    rows = []
    for c in p.crossover:
        tp = throughput.get(c.kernel_us)
        rows.append([
            "empty" if c.kernel_us == 0 else f"{c.kernel_us:g}",
            _nodes(c.nodes_crossover),
            _nodes(c.nodes_crossover_torch_op),
            _pct(c.gain_at_64_nodes),
            _pct(c.gain_at_64_nodes_torch_op),
            _nodes(tp.nodes_crossover) if tp else "n/a",
        ])
    kernel = lambda cell: "empty kernels" if cell == "empty" else f"{cell} µs kernels"  # noqa: E731
    console.print(FittedTable([Col(h, "right") for h in headers], rows, title="Crossover (latency: submit and wait)", heading=kernel))
    if p.amortisation:
        _print_amortisation(p, console)
    if p.gain_below_5pct_kernel_us is not None:
        console.print(Whole(Text.from_markup(f"Graphs gain under 5% (at 64 nodes) for kernels longer than [bold]{p.gain_below_5pct_kernel_us:.1f} µs[/].")))
    console.print(Whole(p.model))
    for note in p.notes:
        console.print(Whole(f"note: {note}", style="dim"))


# What the pay-back table leaves out (analyze measured capture + instantiate of 1.0-8.3 ms
# for its targets' 2-147-node graphs in 40 recorded runs on an H200, where
# this table's figures for those node counts are 0.05-0.5 ms).
WORKLOAD_SETUP = (
    "These count the graph API alone. A step captured with torch.cuda.graph also runs once "
    "under capture, after the context synchronizes and empties the allocator's cache: its "
    "set-up is usually milliseconds, which analyze measures for each target."
)


def _print_amortisation(p: DeviceProfile, console: Console) -> None:
    """Replays to pay back set-up, with the 95% intervals where the profile has them, and a
    line when instantiate's fixed part is undetermined (small graphs' figures are rough)."""
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable
    from launchprof.render.whole_text import Whole

    rows = [
        [str(a.nodes), _with_interval(a.setup_us, a.setup_low_us, a.setup_high_us, 0),
         "n/a" if a.saved_per_replay_us is None else f"{a.saved_per_replay_us:.1f}",
         "never" if a.replays is None else _with_interval(a.replays, a.replays_low, a.replays_high, 1)]
        for a in p.amortisation
    ]
    cols = [Col(name, "right") for name in ("nodes", "set-up µs (95%)", "saved per replay µs", "replays (95%)")]
    title = "Replays to pay back capture + instantiate (tiny kernels, torch-op eager)"
    console.print(FittedTable(cols, rows, title=title, heading=lambda cell: f"{cell} nodes"))
    console.print(Whole(Text(WORKLOAD_SETUP)))
    if "instantiate_fixed_us" in p.undetermined and p.instantiate_fixed_us is not None:
        from launchprof.crossover.determined import rough_interval

        shown = " (95% intervals in parentheses)" if any(a.setup_low_us is not None for a in p.amortisation) else ""
        console.print(Whole(Text(
            f"Set-up includes instantiate's fixed part, {rough_interval(p.instantiate_fixed_us)}, which this sweep does not "
            f"determine: for small graphs the set-up and the replays are rough{shown}."
        )))


def _specs(p: DeviceProfile) -> list[tuple[str, Interval | None, int, str]]:
    """(field, value, digits, what it is) for every coefficient, in the table's order."""
    return [
        ("eager_op_us", p.eager_op_us, 2, "eager launch per torch op (x.add_ back to back)"),
        ("raw_launch_us", p.raw_launch_us, 2, f"eager bare launch ({p.raw_launch_method or 'n/a'})"),
        ("graph_launch_fixed_us", p.graph_launch_fixed_us, 2, "graph launch, fixed part (submit and wait)"),
        ("graph_node_us", p.graph_node_us, 3, "graph, per node of the shortest kernels"),
        ("floor_node_us", p.floor_node_us, 3, f"floor per node, empty kernels ({p.floor_kernel or 'n/a'}, events)"),
        ("graph_gap_us", p.graph_gap_us, 3, "graph, per node beyond the kernel's own time"),
        ("eager_gap_us", p.eager_gap_us, 3, "eager, per kernel beyond its own time (GPU-bound)"),
        ("capture_node_us", p.capture_node_us, 2, "capture, per node"),
        ("instantiate_node_us", p.instantiate_node_us, 2, "instantiate, per node"),
        ("instantiate_fixed_us", p.instantiate_fixed_us, 1, "instantiate, fixed part"),
        ("first_launch_node_us", p.first_launch_node_us, 3, "first launch extra, per node"),
        ("update_node_us", p.update_node_us, 3, "cudaGraphExecUpdate, per node"),
        ("reinstantiate_node_us", p.reinstantiate_node_us, 3, "cudaGraphInstantiate again, per node"),
        ("empty_kernel_us", p.empty_kernel_us, 2, "traced duration of an empty kernel (CUPTI)"),
    ]


def _coefficients(p: DeviceProfile) -> list[list[str]]:
    """One row per coefficient: what it is, its median, its interval, its spread across rounds."""
    return [[what, *_cell(value, digits, name in p.undetermined), _spread(p, name)] for name, value, digits, what in _specs(p)]


def _undetermined_lines(p: DeviceProfile) -> list[str]:
    """One line per coefficient this sweep does not determine (crossover/determined.py)."""
    return [_undetermined_line(what, name, value) for name, value, _, what in _specs(p) if value is not None and name in p.undetermined]


def _coefficient_line(row: Sequence[str], style: str) -> Any:
    """A coefficient as one wrapped line: "capture, per node  2.00 µs (95% interval 1.81 – 2.07), spread 4%"."""
    from rich.text import Text

    from launchprof.render.whole_text import Whole

    what, median, interval, spread = row
    text = Text(what, style="bold")
    figure = "n/a" if median == "n/a" else f"{median} µs" + (f" (95% interval {interval})" if interval else "")
    text.append(f"  {figure}" + (f", spread across rounds {spread}" if spread else ""))
    return Whole(text, indent=2)
