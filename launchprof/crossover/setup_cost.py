"""A graph's one-off set-up (capture + instantiate) with its 95% interval, and the replays it takes to pay back.

Set-up is a line in the node count whose intercept, instantiate's fixed part, the sweep does
not determine (:mod:`launchprof.crossover.determined`: 9.9 µs [2.5, 41.4] and 24.8 µs
[4.2, 39.2] in two runs back to back). For a large graph the per-node part dominates and
the intercept does not matter; for a graph of a few nodes it is most of the set-up, and a
point figure would claim a precision the sweep does not have. So the set-up, and the payback
computed from it (the crossover's pay-back table), carry the coefficients' intervals (drawn
as in :mod:`launchprof.crossover.uncertainty`, seeded). These are the graph API's own
set-up: a workload captured with torch.cuda.graph pays several times more
(tests/test_workload_setup.py), which analyze measures.

The draws treat intercept and slope as independent, though a line's two coefficients are
anti-correlated (a higher intercept comes with a lower slope): the interval is somewhat wider
than the data strictly allow at intermediate node counts, never narrower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from launchprof.crossover.uncertainty import DRAWS
from launchprof.model.stats import DRAW_SEED, Estimate, interval_of

if TYPE_CHECKING:
    from launchprof.crossover.profile import LineFit

Line = tuple[Estimate | None, Estimate]  # (fixed part, per node); a missing fixed part counts as zero


def setup_interval_us(lines: Sequence[Line], nodes: int, point: float) -> Estimate:
    """``point`` with the 95% interval of Σ max(fixed + per_node · nodes, 0) over ``lines``,
    stretched to contain it."""
    rng = np.random.default_rng(DRAW_SEED)
    total = np.zeros(DRAWS)
    for fixed, per_node in lines:
        part = per_node.draw(rng, DRAWS) * nodes
        if fixed is not None:
            part = part + fixed.draw(rng, DRAWS)
        total += np.maximum(part, 0.0)
    return interval_of(total, point).holding_median()


def fit_lines(*fits: LineFit | None) -> list[Line]:
    """The fitted set-up lines (capture, instantiate, or the two timed together) as :data:`Line` s."""
    out: list[Line] = []
    for fit in fits:
        if fit is None:
            continue
        fixed, slope = Estimate.of(fit.fixed_us), Estimate.of(fit.per_node_us)
        if slope is not None:
            out.append((fixed, slope))
    return out


def replays_interval(low_us: float, high_us: float, saved_us: float | None) -> tuple[float | None, float | None]:
    """Replays to pay back a set-up anywhere in [low, high] when each replay saves ``saved_us``."""
    if saved_us is None or not math.isfinite(saved_us) or saved_us <= 0:
        return None, None
    return max(low_us, 0.0) / saved_us, max(high_us, 0.0) / saved_us
