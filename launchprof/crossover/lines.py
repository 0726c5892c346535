"""Lines fitted to sweep samples: time = fixed + per_node * count, with 95% intervals.

Every line is fitted to the per-count medians by weighted least squares with relative
weights, its interval bootstrapped over the raw samples (the model and its reasons:
:mod:`launchprof.crossover.fit`). Below the profile's derivation and the per-round spread
(:mod:`launchprof.crossover.spread`), which both fit lines.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from launchprof.crossover.profile import Interval, LineFit, Series
from launchprof.model.stats import SEED, interval_of, median_of, resampled


def _weights(y: np.ndarray, relative: bool) -> np.ndarray:
    if not relative:
        return np.ones_like(y)
    eps = 1e-3 + 0.01 * float(np.max(np.abs(y)))
    return 1.0 / np.maximum(np.abs(y), eps) ** 2


def _wls(x: np.ndarray, ys: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intercepts and slopes of y = a + b x for each row of ``ys`` (closed form, vectorised)."""
    sw, sx, sxx = w.sum(), (w * x).sum(), (w * x * x).sum()
    sy, sxy = (ys * w).sum(axis=1), (ys * w * x).sum(axis=1)
    det = sw * sxx - sx * sx
    slope = (sw * sxy - sx * sy) / det
    return (sy - slope * sx) / sw, slope


def fit_line(
    counts: Sequence[float],
    groups: Sequence[Sequence[float]],
    *,
    relative: bool = True,
    resamples: int = 400,
    seed: int = SEED,
) -> LineFit | None:
    """Fit time = fixed + per_node * count to groups of samples (one group per count).

    None when fewer than two distinct counts have data: a line needs two points.
    """
    pairs = [(float(c), np.asarray([v for v in g if v is not None and math.isfinite(v)], dtype=float)) for c, g in zip(counts, groups)]
    pairs = [(c, g) for c, g in pairs if g.size]
    if len({c for c, _ in pairs}) < 2:
        return None
    x = np.array([c for c, _ in pairs])
    y = np.array([float(np.median(g)) for _, g in pairs])
    w = _weights(y, relative)
    a, b = (float(v[0]) for v in _wls(x, y[None, :], w))
    lows, highs = [a, b], [a, b]
    if resamples > 0 and any(g.size > 1 for _, g in pairs):
        draws = resampled([g for _, g in pairs], resamples, np.random.default_rng(seed))
        boot = np.column_stack([median_of(d) for d in draws])
        for i, (point, est) in enumerate(zip((a, b), _wls(x, boot, w))):
            drawn = interval_of(est, point).holding_median()
            lows[i], highs[i] = drawn.low, drawn.high
    elif len(pairs) >= 3:
        # scipy.special, not scipy.stats: the same quantile (stats.t.ppf calls stdtrit), and
        # importing scipy.stats cost about 0.8 s of every crossover run against 0.2 s.
        from scipy.special import stdtrit

        resid = y - (a + b * x)
        s2 = float((w * resid**2).sum()) / (len(pairs) - 2)
        det = w.sum() * (w * x * x).sum() - (w * x).sum() ** 2
        t = float(stdtrit(len(pairs) - 2, 0.975))
        for i, var in enumerate((s2 * (w * x * x).sum() / det, s2 * w.sum() / det)):
            half = t * math.sqrt(max(float(var), 0.0))
            lows[i], highs[i] = lows[i] - half, highs[i] + half
    return LineFit(
        fixed_us=Interval(median=a, low=lows[0], high=highs[0]),
        per_node_us=Interval(median=b, low=lows[1], high=highs[1]),
        points=len(pairs),
    )


def grouped(samples: Iterable[Series], kind: str, kernel_us: float | None = None) -> dict[int, list[float]]:
    """All values of one kind (and kernel duration), by count."""
    out: dict[int, list[float]] = defaultdict(list)
    for s in samples:
        if s.kind == kind and (kernel_us is None or s.kernel_us == kernel_us):
            out[s.count].extend(s.values_us)
    return dict(sorted(out.items()))


def curve(samples: Iterable[Series], kind: str, kernel_us: float | None = None) -> list[tuple[int, float]]:
    """(count, median) points of one kind: what the plot draws."""
    return [(c, float(np.median(v))) for c, v in grouped(samples, kind, kernel_us).items() if v]


def fit_kind(samples: Sequence[Series], kind: str, kernel_us: float | None = None, relative: bool = True) -> LineFit | None:
    by_count = grouped(samples, kind, kernel_us)
    return fit_line(list(by_count), list(by_count.values()), relative=relative)


def kinds_with_prefix(samples: Iterable[Series], prefix: str) -> list[str]:
    return sorted({s.kind for s in samples if s.kind.startswith(prefix + ":")})


def cheapest(samples: Sequence[Series], prefix: str) -> tuple[str | None, LineFit | None]:
    """Of the variants ``prefix:<method>``, the one with the smallest per-count cost."""
    fits = [(k.split(":", 1)[1], fit_kind(samples, k)) for k in kinds_with_prefix(samples, prefix)]
    fits = [(m, f) for m, f in fits if f is not None]
    if not fits:
        return None, None
    return min(fits, key=lambda mf: mf[1].per_node_us.median)
