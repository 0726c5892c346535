"""launchprof.model.stats owns every resampled interval: one bootstrap, one draw order, fixed seeds."""

from __future__ import annotations

import numpy as np

from launchprof.crossover.fit import median_interval
from launchprof.model.stats import RESAMPLES, SEED, Estimate, bootstrap, median_of, ratio_of_medians, speedup_of

RNG = np.random.default_rng(3)
EAGER, REPLAY = RNG.lognormal(np.log(100), 0.2, 40), RNG.lognormal(np.log(30), 0.2, 25)


def test_two_samples_draw_as_the_speedup_always_did():
    """The first sample's indices, then the second's, from one generator seeded with SEED:
    recorded reports keep their intervals to the last digit."""
    rng = np.random.default_rng(SEED)
    eager = np.median(EAGER[rng.integers(0, EAGER.size, (RESAMPLES, EAGER.size))], axis=1)
    replay = np.median(REPLAY[rng.integers(0, REPLAY.size, (RESAMPLES, REPLAY.size))], axis=1)
    low, high = np.percentile(eager / replay, [2.5, 97.5])
    got = bootstrap(ratio_of_medians, EAGER, REPLAY)
    assert got == Estimate(float(np.median(EAGER) / np.median(REPLAY)), float(low), float(high))
    s = speedup_of(EAGER, REPLAY)
    assert (s.median, s.low, s.high) == (got.median, got.low, got.high)


def test_one_sample_is_the_same_function():
    got = bootstrap(median_of, EAGER, resamples=400)
    iv = median_interval(EAGER)
    assert (iv.median, iv.low, iv.high) == (got.median, got.low, got.high)
    assert got.low < got.median < got.high


def test_the_seed_is_fixed_and_only_a_given_seed_moves_the_draws():
    assert bootstrap(ratio_of_medians, EAGER, REPLAY) == bootstrap(ratio_of_medians, EAGER, REPLAY)
    other = bootstrap(ratio_of_medians, EAGER, REPLAY, seed=SEED + 1)
    assert other.median == bootstrap(ratio_of_medians, EAGER, REPLAY).median
    assert other != bootstrap(ratio_of_medians, EAGER, REPLAY)
