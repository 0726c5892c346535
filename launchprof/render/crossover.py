"""The crossover command's renderers: the device profile as rich tables, or as JSON.

Presentation only (issue 11: the crossover renderer lives in ``render/``): the profile is
already fitted; this module decides how its figures, their intervals, the spread across
rounds and the noisy flag are shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from launchprof.crossover.profile import DeviceProfile, Interval


def render_json(profile: DeviceProfile) -> str:
    """The profile file's JSON, exactly as it is cached (one definition of every figure)."""
    return profile.to_json()


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
    """The coefficients, the crossover, the amortisation and the model, as rich tables."""
    from rich.table import Table

    m = p.machine
    flags = (" · PARTIAL" if p.partial else "") + (" · NOISY" if p.noisy else "") + (" · quick" if p.quick else "")
    coef = Table(title=f"{m.gpu} · driver {m.driver} · CUDA {m.cuda} · torch {m.torch}{flags}")
    coef.add_column("coefficient")
    coef.add_column("µs", justify="right")
    coef.add_column("95% interval", justify="right")
    coef.add_column("spread across rounds", justify="right")
    rows = [
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
    unsure = []
    for name, value, digits, what in rows:
        coef.add_row(what, *_cell(value, digits, name in p.undetermined), _spread(p, name))
        if value is not None and name in p.undetermined:
            unsure.append(_undetermined_line(what, name, value))
    console.print(coef)
    for line in unsure:
        console.print(line)
    if p.noisy:
        console.print(f"[bold yellow]Noisy profile:[/] {p.noisy_reason}")

    cross = Table(title="Crossover (latency: submit and wait)")
    headers = ("kernel µs", "wins from (bare)", "wins from (torch op)", "gain @64 (bare)", "gain @64 (torch op)", "wins from, back to back")
    for name in headers:
        cross.add_column(name, justify="right")
    throughput = {c.kernel_us: c for c in p.crossover_throughput}
    for c in p.crossover:
        tp = throughput.get(c.kernel_us)
        cross.add_row(
            "empty" if c.kernel_us == 0 else f"{c.kernel_us:g}",
            _nodes(c.nodes_crossover),
            _nodes(c.nodes_crossover_torch_op),
            _pct(c.gain_at_64_nodes),
            _pct(c.gain_at_64_nodes_torch_op),
            _nodes(tp.nodes_crossover) if tp else "n/a",
        )
    console.print(cross)
    if p.amortisation:
        amort = Table(title="Replays to pay back capture + instantiate (tiny kernels, torch-op eager)")
        for name in ("nodes", "set-up µs (95%)", "saved per replay µs", "replays (95%)"):
            amort.add_column(name, justify="right")
        for a in p.amortisation:
            saved = "n/a" if a.saved_per_replay_us is None else f"{a.saved_per_replay_us:.1f}"
            replays = "never" if a.replays is None else _with_interval(a.replays, a.replays_low, a.replays_high, 1)
            amort.add_row(str(a.nodes), _with_interval(a.setup_us, a.setup_low_us, a.setup_high_us, 0), saved, replays)
        console.print(amort)
        if "instantiate_fixed_us" in p.undetermined and p.instantiate_fixed_us is not None:
            from launchprof.crossover.determined import rough_interval

            shown = " (95% intervals in parentheses)" if any(a.setup_low_us is not None for a in p.amortisation) else ""
            console.print(
                f"Set-up includes instantiate's fixed part, {rough_interval(p.instantiate_fixed_us)}, which this sweep does not "
                f"determine: for small graphs the set-up and the replays are rough{shown}."
            )
    if p.gain_below_5pct_kernel_us is not None:
        console.print(f"Graphs gain under 5% (at 64 nodes) for kernels longer than [bold]{p.gain_below_5pct_kernel_us:.1f} µs[/].")
    console.print(p.model, soft_wrap=False)
    for note in p.notes:
        console.print(f"[dim]note: {note}[/]")
