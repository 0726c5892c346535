"""Which of a profile's coefficients the sweep does not determine, and how to say so.

A coefficient is *undetermined* when its 95% interval reaches below half its median or above
twice it (:data:`UNDETERMINED_FACTOR`; for a negative figure, the same on its magnitude), or
when it contains zero while not being a single point. Then the data cannot tell the figure
from half or double itself, so the median is a rough size, not a value to compare or repeat.

Why a factor of two. Measured on an H200, two default sweeps back to back agreed
within 10% on every coefficient except the intercept of instantiate time against node count,
``instantiate_fixed_us``: 9.9 µs with 95% interval [2.5, 41.4] against 24.8 µs with
[4.2, 39.2]. The intervals overlap almost entirely; the medians differ by 2.5x because the
per-node slope (about 1.2 µs a node, measured up to 2048 nodes) dominates every point the
line is fitted to and the intercept is an extrapolation. Both intervals reach far below half
the median (0.25x and 0.17x of it), so both are flagged. A rule on the half-width alone
(half-width above the median) would flag the first run and miss the second (17.5 < 24.8),
because bootstrap intervals of intercepts are skewed; comparing each end with the median
catches both. In the recorded default profile (``tests/data/profile.json``, one round)
every other coefficient lies within 0.67x-1.26x of its median except re-instantiate per node,
2.48 [0.51, 2.97], which is flagged too; another default sweep flagged none
of the coefficients its table shows, the widest being instantiate per node, 1.37
[1.04, 2.47]. A stricter factor (1.5) would flag that slope (its high end is 1.80x the
median), a coefficient two sweeps repeated within 10% (1.234 and 1.163): the point of the
flag is a figure the sweep leaves open, not one that is merely imprecise.

The rule is about the coefficient's own interval, not the spread across rounds (the noisy
flag, :mod:`launchprof.crossover.spread`): a coefficient can repeat well between rounds and
still be undetermined when the sweep's design (here, no graphs under 8 nodes) leaves it to
extrapolation.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launchprof.crossover.profile import DeviceProfile

UNDETERMINED_FACTOR = 2.0


def is_undetermined(interval: object) -> bool:
    """True when ``interval`` (a profile Interval) spans more than a factor of two around its median."""
    values = [getattr(interval, k, None) for k in ("median", "low", "high")]
    if any(not isinstance(v, (int, float)) or not math.isfinite(v) for v in values):
        return False
    median, low, high = (float(v) for v in values)  # type: ignore[arg-type]
    if low == high == median:
        return False  # an exact figure (a line through fixed points) is what it is
    if low <= 0 <= high:
        return True  # the data leave even the sign open
    size, near, far = abs(median), min(abs(low), abs(high)), max(abs(low), abs(high))
    return near < size / UNDETERMINED_FACTOR or far > size * UNDETERMINED_FACTOR


def undetermined_coefficients(profile: DeviceProfile) -> list[str]:
    """Names of the profile's coefficients (its interval fields) that the sweep does not determine.

    The intervals are told apart by their shape, as :func:`is_undetermined` reads them, not by
    their class: the profile's own reader calls this to judge an older file, below this module.
    """
    return [f.name for f in dataclasses.fields(profile) if is_undetermined(getattr(profile, f.name))]


def rough(value: float) -> str:
    """Two significant figures (``9.9``, ``41``, ``3.0``, ``0.77``): all an undetermined figure has."""
    if abs(float(f"{value:.2g}")) >= 100:  # 99.7 rounds to 100: no "1.0e+02"
        return f"{value:.0f}"
    return f"{value:#.2g}".rstrip(".")


def rough_interval(interval: object, unit: str = " µs") -> str:
    """``~9.9 µs (95% CI 2.5–41 µs)``; ``to`` instead of a dash when the low end is negative."""
    median, low, high = (float(getattr(interval, k)) for k in ("median", "low", "high"))
    dash = " to " if low < 0 else "–"
    return f"~{rough(median)}{unit} (95% CI {rough(low)}{dash}{rough(high)}{unit})"


def not_determined(interval: object, unit: str = " µs") -> str:
    """``~9.9 µs (not determined by this sweep: 95% CI 2.5–41 µs)``."""
    return rough_interval(interval, unit).replace("(95% CI", "(not determined by this sweep: 95% CI", 1)


def undetermined_sentence(profile: DeviceProfile) -> str | None:
    """One sentence for the model paragraph naming each undetermined coefficient; None when there are none."""
    names = [n for n in profile.undetermined if getattr(profile, n, None) is not None]
    if not names:
        return None
    listed = "; ".join(f"{n} {rough_interval(getattr(profile, n), '' if n == 'kernel_scale' else ' µs')}" for n in names)
    return (
        f"Not determined by this sweep (95% interval beyond a factor of {UNDETERMINED_FACTOR:g} of the figure): {listed}; "
        "read these as rough sizes, not values to compare between runs."
    )
