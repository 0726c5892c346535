"""Summary statistics and the speedup interval.

Timings are skewed (a rare slow call from a page fault or a clock change), so every
figure is a median with p10/p90, never a mean. The speedup's 95% interval is a
bootstrap of the ratio of medians of two independent samples (scipy), so it is
honest about how few calls a short script gives us.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from launchprof.models import Speedup, Stats


def stats_of(samples: Sequence[float]) -> Stats | None:
    """Median, p10, p90 and count of ``samples``; None when there are none."""
    values = np.asarray([s for s in samples if s is not None and np.isfinite(s)], dtype=float)
    if values.size == 0:
        return None
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return Stats(median=float(median), p10=float(p10), p90=float(p90), n=int(values.size))


def speedup_of(eager_us: Sequence[float], replay_us: Sequence[float], seed: int = 0) -> Speedup | None:
    """Eager step time over replay step time: median ratio and a 95% bootstrap interval.

    With fewer than 3 samples on either side no interval can be formed; the
    interval then collapses onto the point estimate and ``n`` says why.
    """
    eager = np.asarray(eager_us, dtype=float)
    replay = np.asarray(replay_us, dtype=float)
    if eager.size == 0 or replay.size == 0 or np.median(replay) <= 0:
        return None
    point = float(np.median(eager) / np.median(replay))
    if eager.size < 3 or replay.size < 3:
        return Speedup(median=point, low=point, high=point)
    from scipy.stats import bootstrap

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(a, axis=axis) / np.median(b, axis=axis)

    import inspect

    # scipy renamed random_state to rng in 1.15; GPU images may carry either.
    seed_arg = "rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state"
    result = bootstrap(
        (eager, replay),
        ratio,
        paired=False,
        vectorized=True,
        n_resamples=2000,
        confidence_level=0.95,
        method="percentile",
        **{seed_arg: np.random.default_rng(seed)},
    )
    low, high = result.confidence_interval
    return Speedup(median=point, low=float(low), high=float(high))
