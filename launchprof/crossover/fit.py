"""Fit the crossover model to sweep samples and derive the device profile. CPU only.

The model, per call of N kernels of duration ``kernel`` (µs):

- eager  = E0 + max(Launch, kernel + gap_e) * N. Launches are asynchronous, so the host
  queues the next kernel while the GPU runs the last one and the slower of the two sets
  the pace: ``Launch * N`` alone holds only for kernels shorter than a launch.
- replay = LaunchGraph + max(Node, kernel + gap_g) * N: one submission, then the GPU walks
  the nodes; ``Node`` is the per-node cost of the shortest kernels, close to the floor of
  empty kernels.
- once per graph: (Capture + Instantiate) * N, paid back by the time each replay saves.

Every line is fitted to the per-count medians by weighted least squares with relative
weights (timing noise grows with the time measured, and the counts are log-spaced, so
plain least squares would let the largest count decide the intercept alone). The 95%
interval is a bootstrap over the raw samples (it says how much timing noise moves the
coefficient); where each count has a single value (a line through other fits' slopes)
it is the t-interval of the fit's residuals instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

import numpy as np

from launchprof.crossover.profile import (
    SCHEMA_VERSION,
    Amortisation,
    CrossoverPoint,
    DeviceProfile,
    DurationFit,
    Interval,
    Kind,
    LineFit,
    Series,
)
from launchprof.crossover.determined import undetermined_coefficients, undetermined_sentence
from launchprof.crossover.lines import cheapest, fit_kind, fit_line, grouped
from launchprof.crossover.setup_cost import Line, fit_lines, replays_interval, setup_interval_us
from launchprof.crossover.spread import host_coefficients, summarise_rounds
from launchprof.crossover.replay_model import breakeven_replays
from launchprof.model.core import Machine
from launchprof.model.stats import SEED, bootstrap, median_of
from launchprof.version import __version__

GAIN_THRESHOLD = 0.05
GAIN_NODES = 64
CROSSOVER_HORIZON = 4096  # "replay wins from N on" is checked up to this many nodes
AMORTISE_NODES = (1, 4, 16, 64, 256, 1024)
MODES = {"latency": (Kind.EAGER_LATENCY, Kind.GRAPH_LATENCY), "throughput": (Kind.EAGER_THROUGHPUT, Kind.GRAPH_THROUGHPUT)}


# --- derived figures -----------------------------------------------------------------


def kernel_durations(samples: Iterable[Series]) -> list[float]:
    return sorted({s.kernel_us for s in samples if s.kind == Kind.GRAPH_LATENCY and s.kernel_us is not None})


def duration_fits(samples: Sequence[Series], mode: str) -> list[DurationFit]:
    eager_kind, graph_kind = MODES[mode]
    return [
        DurationFit(mode=mode, kernel_us=k, eager=fit_kind(samples, eager_kind, k), graph=fit_kind(samples, graph_kind, k))
        for k in kernel_durations(samples)
    ]


def nodes_crossover(eager: LineFit, graph: LineFit, horizon: int = CROSSOVER_HORIZON) -> int | None:
    """Smallest node count from which replay is faster than eager at every count up to ``horizon``.

    None when replay is not faster at ``horizon``: for these kernels graphs do not pay.
    """
    d0 = eager.fixed_us.median - graph.fixed_us.median
    ds = eager.per_node_us.median - graph.per_node_us.median
    if d0 + ds * horizon <= 0:
        return None
    if d0 + ds > 0:
        return 1
    return max(1, math.floor(-d0 / ds) + 1)  # here ds > 0: d(1) <= 0 < d(horizon)


def gain_at(eager: LineFit, graph: LineFit, nodes: int = GAIN_NODES) -> float | None:
    """Eager time / replay time - 1 at ``nodes`` kernels, from the fitted lines."""
    replay = graph.at(nodes)
    return eager.at(nodes) / replay - 1.0 if replay > 0 else None


def with_launch_floor(eager: LineFit, launch_us: float | None) -> LineFit:
    """The eager line when each launch costs at least ``launch_us`` on the host (a torch op)."""
    if launch_us is None or eager.per_node_us.median >= launch_us:
        return eager
    return LineFit(fixed_us=eager.fixed_us, per_node_us=Interval(launch_us, launch_us, launch_us), points=eager.points)


def crossover_points(fits: Sequence[DurationFit], eager_op_us: float | None) -> list[CrossoverPoint]:
    points = []
    for f in fits:
        if f.eager is None or f.graph is None:
            continue
        as_op = with_launch_floor(f.eager, eager_op_us)
        points.append(
            CrossoverPoint(
                kernel_us=f.kernel_us,
                nodes_crossover=nodes_crossover(f.eager, f.graph),
                gain_at_64_nodes=gain_at(f.eager, f.graph),
                nodes_crossover_torch_op=nodes_crossover(as_op, f.graph) if eager_op_us is not None else None,
                gain_at_64_nodes_torch_op=gain_at(as_op, f.graph) if eager_op_us is not None else None,
            )
        )
    return points


def gain_below(points: Sequence[CrossoverPoint], threshold: float = GAIN_THRESHOLD) -> float | None:
    """Kernel duration (µs) above which graphs gain under ``threshold`` at 64 nodes.

    Linear interpolation between the last duration at or above the threshold and the
    first below it; the shortest duration if even that gains less; None if none does.
    """
    pts = sorted((p.kernel_us, p.gain_at_64_nodes) for p in points if p.gain_at_64_nodes is not None)
    for i, (k, g) in enumerate(pts):
        if g < threshold:
            if i == 0:
                return k
            k0, g0 = pts[i - 1]
            return k0 + (g0 - threshold) / (g0 - g) * (k - k0)
    return None


def per_node_gap(
    fits: Sequence[DurationFit], which: str, min_kernel_us: float, min_slope_us: float = 0.0
) -> tuple[Interval | None, Interval | None]:
    """Per-node time beyond the kernel itself, and the kernel-time scale, from the slopes.

    Fits slope(kernel) = scale * kernel + gap over the durations where the GPU sets the
    pace (kernel >= ``min_kernel_us`` and slope >= ``min_slope_us``). ``scale`` near 1
    checks the spin-kernel calibration.
    """
    pts = [(f.kernel_us, getattr(f, which).per_node_us.median) for f in fits if getattr(f, which) is not None]
    pts = [(k, s) for k, s in pts if k >= min_kernel_us and s >= min_slope_us]
    line = fit_line([k for k, _ in pts], [[s] for _, s in pts], relative=False)
    if line is None:
        if len(pts) == 1:
            gap = pts[0][1] - pts[0][0]
            return Interval(gap, gap, gap), None
        return None, None
    return line.fixed_us, line.per_node_us


def setup_line(samples: Sequence[Series]) -> tuple[LineFit | None, LineFit | None, LineFit | None]:
    """(capture, instantiate, capture+instantiate) lines; the last from a fallback measurement."""
    return fit_kind(samples, Kind.CAPTURE), fit_kind(samples, Kind.INSTANTIATE), fit_kind(samples, Kind.CAPTURE_INSTANTIATE)


def setup_us(nodes: int, capture: LineFit | None, instantiate: LineFit | None, combined: LineFit | None) -> float | None:
    """Capture + instantiate time of a graph of ``nodes`` kernels."""
    if capture is not None and instantiate is not None:
        return max(capture.at(nodes), 0.0) + max(instantiate.at(nodes), 0.0)
    if combined is not None:
        return max(combined.at(nodes), 0.0)
    return None


def replays_to_amortise(
    nodes: int, setup: float | None, eager: LineFit, graph: LineFit, lines: Sequence[Line] = ()
) -> Amortisation | None:
    """Replays of an ``nodes``-node graph needed to win back its capture and instantiation.

    ``lines`` are the set-up lines with their intervals: the set-up and the replays then
    carry a 95% interval too (instantiate's intercept is rarely determined by the sweep).
    """
    if setup is None:
        return None
    saved = eager.at(nodes) - graph.at(nodes)
    low = high = replays_low = replays_high = None
    if lines:
        setup_range = setup_interval_us(lines, nodes, setup)
        low, high = setup_range.low, setup_range.high
        replays_low, replays_high = replays_interval(low, high, saved)
    return Amortisation(
        nodes=nodes,
        setup_us=setup,
        saved_per_replay_us=saved,
        replays=breakeven_replays(setup, eager.at(nodes), graph.at(nodes)),
        setup_low_us=low,
        setup_high_us=high,
        replays_low=replays_low,
        replays_high=replays_high,
    )


def amortisation_table(
    shortest: DurationFit | None, op_us: float | None, capture: LineFit | None, instantiate: LineFit | None, combined: LineFit | None
) -> list[Amortisation]:
    """Replays to pay back set-up for graphs of tiny kernels, against eager torch ops."""
    if shortest is None or shortest.eager is None or shortest.graph is None:
        return []
    eager_line = with_launch_floor(shortest.eager, op_us)
    lines = fit_lines(capture, instantiate) if capture is not None and instantiate is not None else fit_lines(combined)
    items = (
        replays_to_amortise(n, setup_us(n, capture, instantiate, combined), eager_line, shortest.graph, lines) for n in AMORTISE_NODES
    )
    return [item for item in items if item is not None]


def median_interval(values: Sequence[float], resamples: int = 400, seed: int = SEED) -> Interval | None:
    """Median of ``values`` with a 95% bootstrap interval."""
    data = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if data.size == 0:
        return None
    median = float(np.median(data))
    if data.size < 3:
        return Interval(median, float(data.min()), float(data.max()))
    drawn = bootstrap(median_of, data, resamples=resamples, seed=seed)
    return Interval(median, drawn.low, drawn.high)


def calibrated_cycles_per_us(samples: Sequence[Series]) -> float | None:
    line = fit_kind(samples, Kind.CALIBRATION)
    if line is None or line.per_node_us.median <= 0:
        return None
    return 1.0 / line.per_node_us.median


# --- the profile ---------------------------------------------------------------------


def derive_profile(
    samples: Sequence[Series],
    machine: Machine,
    *,
    partial: bool = False,
    quick: bool = False,
    notes: Sequence[str] = (),
    created: str | None = None,
    plan: str | None = None,
) -> DeviceProfile:
    """Everything the profile states, computed from the raw samples alone."""
    notes = list(notes)
    eager_op = fit_kind(samples, Kind.EAGER_OP)
    raw_method, raw = cheapest(samples, Kind.RAW_LAUNCH)
    floor_kernel, floor = cheapest(samples, Kind.FLOOR)
    latency, throughput = duration_fits(samples, "latency"), duration_fits(samples, "throughput")
    shortest = latency[0] if latency else None
    capture, instantiate, combined = setup_line(samples)
    pooled: dict[str, Interval | None] = {
        "eager_op_us": _slope(eager_op),
        "raw_launch_us": _slope(raw),
        "graph_launch_fixed_us": shortest.graph.fixed_us if shortest and shortest.graph else None,
        "instantiate_node_us": _slope(instantiate) or _slope(combined),
        "update_node_us": _slope(fit_kind(samples, Kind.UPDATE)),
    }
    rounds = summarise_rounds(samples, pooled, host_coefficients(raw_method, shortest.kernel_us if shortest else None))
    host = {**pooled, **rounds.medians}
    op_us = host["eager_op_us"].median if host["eager_op_us"] else None
    crossover = crossover_points(latency, op_us)
    if instantiate is None and combined is not None:
        notes.append("instantiate timed together with capture end (CUDAGraph(keep_graph=True) was not available)")
    graph_gap, _ = per_node_gap(latency, "graph", min_kernel_us=2.0)
    launch_floor = 1.5 * raw.per_node_us.median if raw else 0.0
    eager_gap, _ = per_node_gap(latency, "eager", min_kernel_us=2.0, min_slope_us=launch_floor)
    _, scale = per_node_gap(latency, "graph", min_kernel_us=1.0)
    amortisation = amortisation_table(shortest, op_us, capture, instantiate, combined)
    gain_5 = gain_below(crossover)
    if crossover and gain_5 is None:
        notes.append(f"graphs gained at least 5% at {GAIN_NODES} nodes for every kernel duration measured")
    profile = DeviceProfile(
        schema_version=SCHEMA_VERSION,
        launchprof_version=__version__,
        created=created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        machine=machine,
        partial=partial,
        quick=quick,
        eager_op_us=host["eager_op_us"],
        raw_launch_us=host["raw_launch_us"],
        raw_launch_method=raw_method,
        graph_launch_fixed_us=host["graph_launch_fixed_us"],
        graph_node_us=shortest.graph.per_node_us if shortest and shortest.graph else None,
        floor_node_us=floor.per_node_us if floor else None,
        floor_kernel=floor_kernel,
        instantiate_node_us=host["instantiate_node_us"],
        instantiate_fixed_us=instantiate.fixed_us if instantiate else None,
        capture_node_us=capture.per_node_us if capture else None,
        update_node_us=host["update_node_us"],
        reinstantiate_node_us=_slope(fit_kind(samples, Kind.REINSTANTIATE)),
        first_launch_node_us=_slope(fit_kind(samples, Kind.FIRST_LAUNCH, relative=False)),
        graph_gap_us=graph_gap,
        eager_gap_us=eager_gap,
        kernel_scale=scale,
        empty_kernel_us=median_interval(grouped(samples, f"{Kind.TRACED}:spin").get(1, [])),
        cycles_per_us=calibrated_cycles_per_us(samples),
        crossover=crossover,
        crossover_throughput=crossover_points(throughput, op_us),
        gain_below_5pct_kernel_us=gain_5,
        amortisation=amortisation,
        fits=latency + throughput,
        samples=list(samples),
        notes=notes,
        spread=rounds.spread,
        noisy=rounds.noisy,
        noisy_reason=rounds.reason,
        plan=plan,
    )
    return _with_model(profile)


def _slope(line: LineFit | None) -> Interval | None:
    return line.per_node_us if line else None


def refit(profile: DeviceProfile) -> DeviceProfile:
    """Redo the fit from the samples a profile keeps (e.g. recorded on another machine)."""
    derived_notes = ("instantiate timed together", "graphs gained at least")
    notes = [n for n in profile.notes if not n.startswith(derived_notes)]
    return derive_profile(
        profile.samples, profile.machine, partial=profile.partial, quick=profile.quick, notes=notes, created=profile.created,
        plan=profile.plan,
    )


def _with_model(profile: DeviceProfile) -> DeviceProfile:
    from dataclasses import replace

    profile = replace(profile, undetermined=undetermined_coefficients(profile))
    return replace(profile, model=describe_model(profile))


def fmt(value: Interval | None, digits: int = 2) -> str:
    """``7.10 [7.02, 7.21]``: a figure with its 95% interval, or ``n/a``."""
    if value is None:
        return "n/a"
    return f"{value.median:.{digits}f} [{value.low:.{digits}f}, {value.high:.{digits}f}]"


def describe_model(p: DeviceProfile) -> str:
    """The fitted model in one paragraph, with its coefficients and 95% intervals."""
    raw = f"{fmt(p.raw_launch_us)} per bare launch ({p.raw_launch_method})" if p.raw_launch_us else "bare launch n/a"
    parts = [
        "Fitted model (latency mode: submit and wait; µs, 95% intervals). "
        f"Eager per call = E0 + max(Launch, kernel + gap_e)·N, since launches are asynchronous and the "
        f"slower of host and GPU sets the pace: Launch = {fmt(p.eager_op_us)} per torch op, {raw}; "
        f"gap_e = {fmt(p.eager_gap_us)}.",
        f"Replay per call = LaunchGraph + max(Node, kernel + gap_g)·N: LaunchGraph = {fmt(p.graph_launch_fixed_us)}, "
        f"Node = {fmt(p.graph_node_us, 3)} (floor of empty kernels {fmt(p.floor_node_us, 3)}), gap_g = {fmt(p.graph_gap_us, 3)}.",
    ]
    if p.capture_node_us is not None or p.instantiate_node_us is not None:
        parts.append(f"Once per graph: (Capture {fmt(p.capture_node_us)} + Instantiate {fmt(p.instantiate_node_us)})·N.")
    if p.update_node_us is not None:
        parts.append(
            f"In-place update {fmt(p.update_node_us, 3)} per node against re-instantiation {fmt(p.reinstantiate_node_us, 3)}."
        )
    if p.crossover:
        first = p.crossover[0]
        for n, what in ((first.nodes_crossover_torch_op, "torch ops"), (first.nodes_crossover, "bare launches")):
            if n is not None:
                parts.append(f"For the shortest kernels replay beats eager {what} from {n} node{'s' if n != 1 else ''}.")
                break
    if p.gain_below_5pct_kernel_us is not None:
        parts.append(f"Graphs gain under 5% at {GAIN_NODES} nodes for kernels above {p.gain_below_5pct_kernel_us:.1f} µs.")
    if p.spread:
        widest = max(p.spread, key=lambda k: p.spread[k])
        parts.append(f"Host coefficients are medians of interleaved rounds; the widest spread across rounds is {widest} at {p.spread[widest]:.0%}.")
    if p.undetermined:
        parts.append(undetermined_sentence(p) or "")
    if p.noisy:
        parts.append(f"NOISY: {p.noisy_reason}")
    return " ".join(parts)
