from __future__ import annotations

import numpy as np
import pytest

from launchprof.buckets import recommend
from launchprof.session import Speedup, Validation
from launchprof.stats import speedup_of, stats_of
from launchprof.verdict import decide


def test_stats_of():
    s = stats_of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median, s.n) == (3.0, 5) and s.p10 < s.median < s.p90
    assert stats_of([]) is None


def test_speedup_interval_brackets_the_ratio():
    rng = np.random.default_rng(1)
    eager = 100 + rng.normal(0, 3, 40)
    replay = 25 + rng.normal(0, 1, 40)
    s = speedup_of(eager, replay)
    assert s.low < s.median < s.high
    assert 3.5 < s.median < 4.5 and s.high - s.low < 0.5


@pytest.mark.parametrize(
    "speedup, verdict",
    [((3.0, 2.8, 3.2), "graphs-help"), ((1.15, 1.05, 1.2), "marginal"), ((1.05, 1.01, 1.08), "marginal"), ((0.9, 0.88, 0.93), "graphs-dont-help")],
)
def test_verdict_from_speedup(speedup, verdict):
    assert decide(True, True, Validation(3, 3, 0.0), Speedup(*speedup)) == verdict


def test_verdict_special_cases():
    assert decide(False, None, None, None) == "eager-only"
    assert decide(True, False, None, None) == "not-capturable"
    assert decide(True, True, Validation(4, 3, 0.5), Speedup(3, 2.9, 3.1)) == "not-capturable"


def test_buckets_pad_to_powers_of_two():
    [b] = recommend({"x": [(3, 256), (8, 256), (5, 256), (13, 256)]}, {"x": (8, 256)}, 1000)
    assert (b.argument, b.dim, b.sizes) == ("x", 0, [4, 8, 16])
    assert 0 < b.padding_waste < 0.5
    assert b.pool_bytes_estimate == 2000
