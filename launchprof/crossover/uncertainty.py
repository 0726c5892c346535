"""How far a prediction can be off: the profile's coefficient intervals carried through the model.

The prediction is a ratio of a measured eager step to a modelled replay step whose
coefficients each come with a 95% interval. The intervals are asymmetric and the model has
``max()`` in it, so a closed-form error formula would mislead; a seeded Monte Carlo does not:
each draw takes every coefficient from a split normal matching its median and interval
(independently, since they are fitted to different measurements), evaluates the same model,
and the 2.5th/97.5th percentiles of the ratios are the interval. The seed is fixed
(launchprof.model.stats.DRAW_SEED), so one input always gives one answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from launchprof.model.stats import Z95, Estimate, interval_of

DRAWS = 2000


def median_ci(median: float, p10: float, p90: float, n: int) -> Estimate | None:
    """95% interval of a median from a sample's p10/p90 and size (normal approximation).

    sd ≈ (p90 - p10) / 2.563; the median's standard error ≈ 1.2533 · sd / √n.
    """
    if n < 2 or not all(math.isfinite(v) for v in (median, p10, p90)):
        return None
    half = Z95 * 1.2533 * max(p90 - p10, 0.0) / 2.563 / math.sqrt(n)
    return Estimate(median, median - half, median + half)


@dataclass(frozen=True)
class ReplayModel:
    """The replay model's coefficients (µs), each with its interval."""

    fixed: Estimate
    node: Estimate
    excess: Estimate  # per-node time beyond a kernel's traced duration
    per_launch: Estimate  # one extra small launch (input copy, RNG prologue fill)


def replay_draws(
    model: ReplayModel,
    n: int,
    kernel_us: Sequence[float] | float | None,
    gpu_busy_us: float | None,
    extra_launches: int,
    rng: np.random.Generator,
    size: int = DRAWS,
) -> np.ndarray:
    """``size`` draws of the replay step (µs), with the same branches as the point estimate."""
    fixed, node = model.fixed.draw(rng, size), model.node.draw(rng, size)
    excess, launch = model.excess.draw(rng, size), model.per_launch.draw(rng, size)
    if isinstance(kernel_us, Sequence) and not isinstance(kernel_us, str) and len(kernel_us) > 0:
        kernels = np.asarray(kernel_us, dtype=float)
        if kernels.size > 512:  # the distribution, not every kernel, sets the sum: keep memory bounded
            kernels = np.quantile(kernels, np.linspace(0.0, 1.0, 512))
        per = np.maximum(node[:, None], kernels[None, :] + excess[:, None])
        gpu = per.sum(axis=1) * (n / kernels.size)
    else:
        options = [n * node]
        if isinstance(kernel_us, (int, float)) and math.isfinite(kernel_us):
            options.append(n * np.maximum(node, float(kernel_us) + excess))
        if gpu_busy_us is not None and math.isfinite(gpu_busy_us) and gpu_busy_us > 0:
            options.append(float(gpu_busy_us) + n * excess)
        gpu = np.max(np.vstack(options), axis=0)
    return fixed + gpu + extra_launches * launch


def speedup_interval(eager: Estimate, replay: np.ndarray, rng: np.random.Generator, point: float) -> Estimate | None:
    """``point`` with the 95% interval of eager / replay over the draws (replays <= 0 are
    dropped); None when no draw is left."""
    eager_draws = eager.draw(rng, replay.size)
    ok = replay > 0
    if not ok.any():
        return None
    return interval_of(eager_draws[ok] / replay[ok], point)
