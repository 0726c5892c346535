"""A graph's one-off set-up (capture + instantiate) with its 95% interval, and the replays it takes to pay back.

Set-up is a line in the node count whose intercept, instantiate's fixed part, the sweep does
not determine (:mod:`launchprof.crossover.determined`: 9.9 µs [2.5, 41.4] and 24.8 µs
[4.2, 39.2] in two H200 runs back to back). For a large graph the per-node part dominates and
the intercept does not matter; for a graph of a few nodes it is most of the set-up, and a
point figure would claim a precision the sweep does not have. So the set-up, and the payback
computed from it, carry the coefficients' intervals (drawn as in
:mod:`launchprof.crossover.uncertainty`, seeded), and the explanation names the undetermined
fixed part when the profile flags it.

The draws treat intercept and slope as independent, though a line's two coefficients are
anti-correlated (a higher intercept comes with a lower slope): the interval is somewhat wider
than the data strictly allow at intermediate node counts, never narrower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from launchprof.crossover.determined import not_determined
from launchprof.crossover.uncertainty import DRAWS, SEED, Uncertain

if TYPE_CHECKING:
    from launchprof.crossover.profile import DeviceProfile, LineFit

FIXED_SHARE = 0.1  # name an undetermined fixed part when it could be this share of the set-up or more
Line = tuple[Uncertain | None, Uncertain]  # (fixed part, per node); a missing fixed part counts as zero


def setup_interval_us(lines: Sequence[Line], nodes: int, point: float) -> tuple[float, float]:
    """95% interval of Σ max(fixed + per_node · nodes, 0) over ``lines``, always containing ``point``."""
    rng = np.random.default_rng(SEED)
    total = np.zeros(DRAWS)
    for fixed, per_node in lines:
        part = per_node.draw(rng, DRAWS) * nodes
        if fixed is not None:
            part = part + fixed.draw(rng, DRAWS)
        total += np.maximum(part, 0.0)
    low, high = np.percentile(total, [2.5, 97.5])
    return min(float(low), point), max(float(high), point)


def fit_lines(*fits: LineFit | None) -> list[Line]:
    """The fitted set-up lines (capture, instantiate, or the two timed together) as :data:`Line` s."""
    out: list[Line] = []
    for fit in fits:
        if fit is None:
            continue
        fixed, slope = Uncertain.of(fit.fixed_us), Uncertain.of(fit.per_node_us)
        if slope is not None:
            out.append((fixed, slope))
    return out


def replays_interval(low_us: float, high_us: float, saved_us: float | None) -> tuple[float | None, float | None]:
    """Replays to pay back a set-up anywhere in [low, high] when each replay saves ``saved_us``."""
    if saved_us is None or not math.isfinite(saved_us) or saved_us <= 0:
        return None, None
    return max(low_us, 0.0) / saved_us, max(high_us, 0.0) / saved_us


@dataclass(frozen=True)
class SetupEstimate:
    """Capture + instantiate of a ``nodes``-node graph: the figure, its 95% interval and why."""

    nodes: int
    median_us: float
    low_us: float
    high_us: float
    fixed_undetermined: bool  # instantiate's fixed part is flagged undetermined by the profile
    explanation: str

    def replays(self, eager_step_us: float | None, replay_step_us: float | None) -> tuple[float | None, float | None, float | None]:
        """(median, low, high) replays before the set-up is won back; all None when replay saves nothing."""
        from launchprof.predict import breakeven_replays

        median = breakeven_replays(self.median_us, eager_step_us, replay_step_us)
        if median is None or eager_step_us is None or replay_step_us is None:
            return None, None, None
        low, high = replays_interval(self.low_us, self.high_us, eager_step_us - replay_step_us)
        return median, low, high


def _uncertain(interval: object) -> Uncertain | None:
    return Uncertain.of(interval) if interval is not None else None


def predict_setup(nodes: int, profile: DeviceProfile | None) -> SetupEstimate | None:
    """Capture + instantiate the profile predicts for ``nodes`` kernels, before the workload is captured.

    The figure is max(instantiate fixed, 0) + (capture + instantiate per node) · nodes; None
    when the profile has no per-node set-up cost.
    """
    if profile is None:
        return None
    capture, instantiate = _uncertain(profile.capture_node_us), _uncertain(profile.instantiate_node_us)
    per_node = sum(u.median for u in (capture, instantiate) if u is not None)
    if per_node <= 0:
        return None
    fixed = _uncertain(profile.instantiate_fixed_us)
    if fixed is not None:  # a negative fixed cost is not physical: the figure and the draws floor it at zero
        fixed = Uncertain(max(fixed.median, 0.0), max(fixed.low, 0.0), max(fixed.high, 0.0))
    median = (fixed.median if fixed else 0.0) + per_node * nodes
    lines: list[Line] = [(fixed, instantiate or Uncertain(0.0, 0.0, 0.0))]
    if capture is not None:
        lines.append((None, capture))
    low, high = setup_interval_us(lines, nodes, median)
    undetermined = "instantiate_fixed_us" in profile.undetermined
    why = f"capture + instantiate of {nodes} node{'s' if nodes != 1 else ''}: about {median:.0f} µs (95% interval {low:.0f}–{high:.0f} µs)"
    if undetermined and profile.instantiate_fixed_us is not None and fixed is not None and fixed.high >= FIXED_SHARE * median:
        why += f"; it includes instantiate's fixed part, {not_determined(profile.instantiate_fixed_us)}, so for a graph this small the figure is rough"
    elif fixed is None:
        why += "; the profile has no fixed part for instantiate, so this counts the per-node cost only"
    return SetupEstimate(nodes, median, low, high, undetermined, why)
