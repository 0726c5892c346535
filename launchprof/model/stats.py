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


# Student's t, 97.5th percentile, for 1-5 degrees of freedom; beyond that the Cornish-Fisher
# expansion around Z95 is within 0.01 of the table (df 6: 2.444 against 2.447).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}


def t975(df: int) -> float:
    if df in T975:
        return T975[df]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def burst_ratio_interval(eager_medians: Sequence[float], replay_medians: Sequence[float], point: float) -> Estimate | None:
    """``point`` with a 95% interval from the per-burst speedups (eager burst i over replay
    burst i, neighbours in time): a t-interval on their logarithms.

    The pooled bootstrap treats every sample as independent, but the step drifts from burst
    to burst (clocks, host load): long_kernels' six burst ratios read 0.88 to 1.05 while its
    pooled interval was 0.98-1.01. The bursts are the units that drift, so their spread says
    how far this process's ratio could sit. None with fewer than 3 paired bursts."""
    pairs = [(e, r) for e, r in zip(eager_medians, replay_medians) if e > 0 and r > 0]
    if len(pairs) < 3 or not point > 0:
        return None
    logs = np.log([e / r for e, r in pairs])
    half = t975(logs.size - 1) * float(np.std(logs, ddof=1)) / math.sqrt(logs.size)
    centre = float(np.mean(logs))
    return Estimate(point, math.exp(centre - half), math.exp(centre + half)).holding_median()


@dataclass(frozen=True)
class HostPaced:
    """The step's times split by what paces them, for :func:`host_factor_range`.

    The eager step is paced by the host where the GPU waits on launches and by the GPU where
    the kernels are longer than the host's work: ``eager(k) = max(k * eager_host, eager_gpu)``
    for a host ``k`` times slower, scaled so that ``k = 1`` gives the measured step (the
    profile's own eager model: the slower of host and GPU sets the pace). The replay's host
    part (graph launch, copies in) comes before its GPU work: ``replay(k) = replay + (k - 1) * replay_host``.
    """

    eager_us: float
    eager_host_us: float
    eager_gpu_us: float
    replay_us: float
    replay_host_us: float

    def eager_at(self, k: float) -> float:
        now = max(self.eager_host_us, self.eager_gpu_us)
        return self.eager_us * (max(k * self.eager_host_us, self.eager_gpu_us) / now) if now > 0 else self.eager_us

    def replay_at(self, k: float) -> float:
        return self.replay_us + (k - 1.0) * min(self.replay_host_us, self.replay_us)

    def speedup_factor(self, k: float) -> float:
        """How the speedup moves when the host runs ``k`` times slower (``k < 1``: faster)."""
        return (self.eager_at(k) / self.eager_us) / (self.replay_at(k) / self.replay_us)


def host_factor_range(paced: HostPaced, factor: float, points: int = 41) -> tuple[float, float]:
    """The lowest and highest speedup multiplier for a host from ``factor`` times faster to
    ``factor`` times slower (1.0 included). A grid with the bend, not the two ends: the eager
    step's ``max()`` makes the multiplier turn where host and GPU trade the pace."""
    if not (factor >= 1.0 and paced.eager_us > 0 and paced.replay_us > 0):
        return 1.0, 1.0
    ks = list(np.exp(np.linspace(-math.log(factor), math.log(factor), points)))
    if paced.eager_host_us > 0 and 1.0 / factor < paced.eager_gpu_us / paced.eager_host_us < factor:
        ks.append(paced.eager_gpu_us / paced.eager_host_us)  # where host and GPU trade the pace: an extreme
    values = [paced.speedup_factor(float(k)) for k in ks] + [1.0]
    return min(values), max(values)
