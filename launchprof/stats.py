"""Summary statistics and the speedup interval.

Timings are skewed (a rare slow call from a page fault or a clock change), so every
figure is a median with p10/p90, never a mean. The speedup's 95% interval is a
percentile bootstrap of the ratio of medians of two independent samples, so it is
honest about how few calls a short script gives us. It is the method of
``scipy.stats.bootstrap(..., paired=False, method="percentile")``, written in numpy
because importing scipy.stats costs about 1 s of every ``report`` (tests/test_stats_verdict.py
checks the two agree on the H200's recorded samples).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from launchprof.models import Speedup, Stats

RESAMPLES = 2000


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
    rng = np.random.default_rng(seed)
    eager_medians = np.median(eager[rng.integers(0, eager.size, (RESAMPLES, eager.size))], axis=1)
    replay_medians = np.median(replay[rng.integers(0, replay.size, (RESAMPLES, replay.size))], axis=1)
    low, high = np.percentile(eager_medians / replay_medians, [2.5, 97.5])
    return Speedup(median=point, low=float(low), high=float(high))
