"""Summary statistics, and every interval launchprof draws: the one owner of resampling.

Timings are skewed (a rare slow call from a page fault or a clock change), so every
figure is a median with p10/p90, never a mean. An interval is the 2.5th and 97.5th
percentiles of draws: a percentile bootstrap (:func:`bootstrap`) of one or more samples,
or the Monte Carlo draws that carry a device profile's coefficient intervals through the
replay model (launchprof.crossover.uncertainty). The speedup's 95% interval is a
percentile bootstrap of the ratio of medians of two independent samples, so it is
honest about how few calls a short script gives us. It is the method of
``scipy.stats.bootstrap(..., paired=False, method="percentile")``, written in numpy
because importing scipy.stats costs about 1 s of every ``report`` (tests/test_stats_verdict.py
checks the two agree on recorded GPU samples).

Seeds are fixed, so the same samples always give the same interval (CI logs and
re-rendered reports must be reproducible): every bootstrap starts from :data:`SEED`; the
Monte Carlo draws from :data:`DRAW_SEED`, kept apart so that recorded predictions keep
their numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from launchprof.model.step_timing import Speedup, Stats

RESAMPLES = 2000
SEED = 0
DRAW_SEED = 12
PERCENTILES = (2.5, 97.5)  # the ends of a 95% interval
Z95 = 1.959964


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval; an exact value has low == median == high."""

    median: float
    low: float
    high: float

    @staticmethod
    def of(interval: object) -> Estimate | None:
        """From anything with finite median/low/high (a profile Interval), the interval
        stretched to hold its median; else None."""
        values = [getattr(interval, k, None) for k in ("median", "low", "high")]
        if any(v is None or not math.isfinite(float(v)) for v in values):
            return None
        median, low, high = (float(v) for v in values)  # type: ignore[arg-type]
        return Estimate(median, low, high).holding_median()

    def holding_median(self) -> Estimate:
        """The interval stretched to hold its own median: resampled percentiles of a skewed
        figure can leave the point estimate just outside them."""
        return Estimate(self.median, min(self.low, self.median), max(self.high, self.median))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Split-normal draws: the interval's upper half-width above the median, lower below."""
        z = rng.standard_normal(size)
        up, down = (self.high - self.median) / Z95, (self.median - self.low) / Z95
        return self.median + np.where(z > 0, z * up, z * down)


def interval_of(draws: np.ndarray, median: float) -> Estimate:
    """``median`` with the 95% interval of ``draws`` (their 2.5th and 97.5th percentiles)."""
    low, high = np.percentile(draws, PERCENTILES)
    return Estimate(median, float(low), float(high))


def resampled(samples: Sequence[np.ndarray], resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Each sample drawn with replacement ``resamples`` times (one row per draw), the samples
    in the order given, all from ``rng``: the draw order every bootstrap shares."""
    return [s[rng.integers(0, s.size, (resamples, s.size))] for s in samples]


def bootstrap(
    statistic: Callable[..., np.ndarray], *samples: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> Estimate:
    """``statistic`` of the samples, with its 95% percentile bootstrap interval.

    ``statistic`` takes one array per sample and reduces along the last axis, so it gives
    the figure from the samples and one figure per row from their resampled draws."""
    arrays = [np.asarray(s, dtype=float) for s in samples]
    point = float(statistic(*arrays))
    return interval_of(statistic(*resampled(arrays, resamples, np.random.default_rng(seed))), point)


def median_of(values: np.ndarray) -> np.ndarray:
    return np.median(values, axis=-1)


def ratio_of_medians(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.median(a, axis=-1) / np.median(b, axis=-1)


def stats_of(samples: Sequence[float]) -> Stats | None:
    """Median, p10, p90 and count of ``samples``; None when there are none."""
    values = np.asarray([s for s in samples if s is not None and np.isfinite(s)], dtype=float)
    if values.size == 0:
        return None
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return Stats(median=float(median), p10=float(p10), p90=float(p90), n=int(values.size))


def speedup_of(eager_us: Sequence[float], replay_us: Sequence[float], seed: int = SEED) -> Speedup | None:
    """Eager step time over replay step time: median ratio and a 95% bootstrap interval.

    With fewer than 3 samples on either side no interval can be formed; the
    interval then collapses onto the point estimate and ``n`` says why.
    """
    eager = np.asarray(eager_us, dtype=float)
    replay = np.asarray(replay_us, dtype=float)
    if eager.size == 0 or replay.size == 0 or np.median(replay) <= 0:
        return None
    if eager.size < 3 or replay.size < 3:
        point = float(np.median(eager) / np.median(replay))
        return Speedup(median=point, low=point, high=point)
    ratio = bootstrap(ratio_of_medians, eager, replay, seed=seed)
    return Speedup(median=ratio.median, low=ratio.low, high=ratio.high)
