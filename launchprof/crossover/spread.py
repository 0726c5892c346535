"""The host coefficients per round: their median, their spread, and whether the profile is noisy.

The sweep measures every host coefficient once per round (:mod:`launchprof.crossover.host`).
A coefficient fitted to all rounds pooled hides a host that drifted between rounds: the
bootstrap interval says how well one round pins the line, not how much the next run will
differ. So each coefficient is also fitted per round; the profile keeps the median of the
rounds, an interval that covers both the pooled fit's and the rounds' range, and the
relative spread (max - min) / median. A spread above :data:`NOISY_SPREAD` flags the whole
profile as noisy, with the reason, and every output says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from launchprof.crossover.lines import fit_kind
from launchprof.crossover.profile import Interval, Kind, LineFit, Series

NOISY_SPREAD = 0.15  # two runs should agree within 15%: rounds of one run further apart than that are noise

Picker = Callable[[LineFit], Interval]


@dataclass(frozen=True)
class HostCoefficient:
    """One host coefficient: the sample kind it is fitted to, and which part of the line it is."""

    name: str
    kind: str
    pick: Picker
    kernel_us: float | None = None


@dataclass(frozen=True)
class RoundSummary:
    """What the rounds say about the host coefficients."""

    medians: dict[str, Interval]  # coefficient -> median of rounds, interval widened to the rounds
    spread: dict[str, float]
    noisy: bool
    reason: str | None


def _slope(line: LineFit) -> Interval:
    return line.per_node_us


def _intercept(line: LineFit) -> Interval:
    return line.fixed_us


def host_coefficients(raw_method: str | None, shortest_kernel_us: float | None) -> list[HostCoefficient]:
    """The coefficients the rounds measure, named as the profile names them."""
    out = [HostCoefficient("eager_op_us", Kind.EAGER_OP, _slope)]
    if raw_method is not None:
        out.append(HostCoefficient("raw_launch_us", f"{Kind.RAW_LAUNCH}:{raw_method}", _slope))
    if shortest_kernel_us is not None:
        out.append(HostCoefficient("graph_launch_fixed_us", Kind.GRAPH_LATENCY, _intercept, shortest_kernel_us))
    out += [
        HostCoefficient("instantiate_node_us", Kind.INSTANTIATE, _slope),
        HostCoefficient("update_node_us", Kind.UPDATE, _slope),
    ]
    return out


def per_round(samples: Sequence[Series], coef: HostCoefficient) -> list[float]:
    """The coefficient fitted to each round's samples alone (rounds without a line are left out)."""
    rounds = sorted({s.round for s in samples if s.round is not None and s.kind == coef.kind})
    values = []
    for r in rounds:
        line = fit_kind([s for s in samples if s.round == r], coef.kind, coef.kernel_us)
        if line is not None:
            values.append(coef.pick(line).median)
    return values


def relative_spread(values: Sequence[float]) -> float | None:
    """(max - min) / |median|; None with fewer than two values or a zero median."""
    if len(values) < 2:
        return None
    median = statistics.median(values)
    return (max(values) - min(values)) / abs(median) if median else None


def summarise_rounds(samples: Sequence[Series], pooled: dict[str, Interval | None], coefs: Sequence[HostCoefficient]) -> RoundSummary:
    """Median of rounds and spread per coefficient; noisy when any spread exceeds NOISY_SPREAD."""
    medians: dict[str, Interval] = {}
    spread: dict[str, float] = {}
    for coef in coefs:
        values = per_round(samples, coef)
        s = relative_spread(values)
        if s is None:
            continue
        spread[coef.name] = round(s, 4)
        mid = statistics.median(values)
        base = pooled.get(coef.name)
        lows, highs = [min(values), mid], [max(values), mid]
        if base is not None:
            lows.append(base.low)
            highs.append(base.high)
        medians[coef.name] = Interval(median=mid, low=min(lows), high=max(highs))
    over = sorted(((v, k) for k, v in spread.items() if v > NOISY_SPREAD), reverse=True)
    reason = None
    if over:
        moved = ", ".join(f"{name} by {value:.0%}" for value, name in over)
        reason = (
            f"host coefficients moved between rounds ({moved}; over {NOISY_SPREAD:.0%}): the host was busy or "
            "its clock changed; predictions from this profile are rougher, run `launchprof crossover` on a quieter machine"
        )
    return RoundSummary(medians=medians, spread=spread, noisy=bool(over), reason=reason)
