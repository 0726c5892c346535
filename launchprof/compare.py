"""Compare two reports as data: metric deltas, hazards added and removed, ``--fail-on`` rules.

Nothing here prints: ``launchprof.commands.compare`` renders the result. Hazards are
identified by kind + file + line, with the file taken relative to its report's script
folder so that the same checkout measured in two CI workspaces still matches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from launchprof.errors import UsageError
from launchprof.session import Hazard, Report, Stats


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: str  # "us", "count", "fraction", "ratio": how to show it
    higher_is_better: bool
    get: Callable[[Report], float | None]


def _stat(stats: Stats | None) -> float | None:
    return None if stats is None else stats.median


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("kernels_per_step", "Kernels per step", "count", False, lambda r: r.eager and r.eager.kernels_per_step),
        Metric("gpu_idle_fraction", "GPU idle fraction", "fraction", False, lambda r: r.eager and r.eager.gpu_idle_fraction),
        Metric("launch_gap_us", "Launch gap (median)", "us", False, lambda r: r.eager and _stat(r.eager.launch_gap_us)),
        Metric("eager_step_us", "Eager step", "us", False, lambda r: r.eager and _stat(r.eager.step_us)),
        Metric("replay_step_us", "Replay step", "us", False, lambda r: r.replay and _stat(r.replay.step_us)),
        Metric("speedup", "Speedup", "ratio", True, lambda r: r.speedup and r.speedup.median),
        Metric("graph_nodes", "Graph nodes", "count", False, lambda r: r.replay and r.replay.graph_nodes),
        Metric("instantiate_us", "Instantiate", "us", False, lambda r: r.replay and r.replay.instantiate_us),
    )
}

# Best first; eager-only and static-only measured no graph, so they have no rank.
VERDICT_RANK = {"graphs-help": 3, "marginal": 2, "graphs-dont-help": 1, "not-capturable": 0}
MACHINE_FIELDS = ("gpu", "driver", "cuda", "torch")


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    base: float | None
    new: float | None

    @property
    def change(self) -> float | None:
        return None if self.base is None or self.new is None else self.new - self.base

    @property
    def relative(self) -> float | None:
        """(new - base) / base; infinite when a zero grew, None when undefined."""
        if self.change is None:
            return None
        if self.base == 0:
            return 0.0 if self.change == 0 else math.copysign(math.inf, self.change)
        return self.change / abs(self.base)

    @property
    def worse(self) -> bool | None:
        if not self.change:
            return None if self.change is None else False
        return (self.change < 0) if METRICS[self.metric].higher_is_better else (self.change > 0)


@dataclass(frozen=True)
class HazardKey:
    kind: str
    file: str | None
    line: int | None
    severity: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file or "(no file)"
        return f"{self.kind} at {where}"


@dataclass(frozen=True)
class Comparison:
    base_verdict: str
    new_verdict: str
    deltas: list[MetricDelta]
    hazards_added: list[HazardKey]
    hazards_removed: list[HazardKey]
    machine_differences: list[str]  # "gpu: NVIDIA H100 -> NVIDIA H200"

    @property
    def verdict_worse(self) -> bool:
        """Lower rank, or a ranked verdict replaced by one that measured no graph at all."""
        base, new = VERDICT_RANK.get(self.base_verdict), VERDICT_RANK.get(self.new_verdict)
        if base is None:
            return False
        return new is None or new < base

    def delta(self, metric: str) -> MetricDelta:
        return next(d for d in self.deltas if d.metric == metric)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: base, new, change, relative change, worse."""
        rows = [
            {"metric": d.metric, "base": d.base, "new": d.new, "change": d.change, "relative": d.relative, "worse": d.worse}
            for d in self.deltas
        ]
        return pd.DataFrame(rows).set_index("metric")


def _hazard_key(h: Hazard, script: str) -> HazardKey:
    file = h.file
    folder = Path(script).parent if script.endswith(".py") else Path(script)  # lint: script is a folder
    if file:
        try:
            file = Path(file).relative_to(folder).as_posix()
        except ValueError:
            file = Path(file).as_posix()
    return HazardKey(h.kind, file, h.line, h.severity, h.message)


def _identity(key: HazardKey) -> tuple[str, str | None, int | None]:
    return key.kind, key.file, key.line


def compare(base: Report, new: Report) -> Comparison:
    base_keys = [_hazard_key(h, base.script) for h in base.hazards]
    new_keys = [_hazard_key(h, new.script) for h in new.hazards]
    base_ids, new_ids = {_identity(k) for k in base_keys}, {_identity(k) for k in new_keys}
    differences = [
        f"{name}: {getattr(base.machine, name)} -> {getattr(new.machine, name)}"
        for name in MACHINE_FIELDS
        if getattr(base.machine, name) != getattr(new.machine, name)
    ]
    return Comparison(
        base_verdict=base.verdict,
        new_verdict=new.verdict,
        deltas=[MetricDelta(m.name, m.get(base), m.get(new)) for m in METRICS.values()],
        hazards_added=[k for k in new_keys if _identity(k) not in base_ids],
        hazards_removed=[k for k in base_keys if _identity(k) not in new_ids],
        machine_differences=differences,
    )


# --- --fail-on rules -------------------------------------------------------------------------

RULE_FORMS = (
    "METRIC:+N% or METRIC:-N% (moved by more than N% in that direction), "
    "METRIC:+X or METRIC:-X (moved by more than X, e.g. gpu_idle_fraction:+0.05), "
    "new-hazards, verdict; METRIC is one of " + ", ".join(METRICS)
)
_RULE = re.compile(r"^(?P<metric>[a-z_]+):(?P<sign>[+-])(?P<amount>\d+(?:\.\d+)?|\.\d+)(?P<pct>%?)$")


@dataclass(frozen=True)
class Rule:
    text: str
    kind: str  # "metric", "new-hazards" or "verdict"
    metric: str | None = None
    direction: int = 0  # +1: trips on increase, -1: on decrease
    amount: float = 0.0
    percent: bool = False


def parse_rule(text: str) -> Rule:
    """Parse one ``--fail-on`` rule; anything else is a usage error naming the accepted forms."""
    rule = text.strip()
    if rule in ("new-hazards", "verdict"):
        return Rule(rule, rule)
    m = _RULE.match(rule)
    if m is None or m["metric"] not in METRICS:
        what = f"unknown metric {m['metric']!r} in" if m else "cannot read"
        raise UsageError(f"{what} --fail-on rule {text!r}: use {RULE_FORMS}")
    return Rule(rule, "metric", m["metric"], 1 if m["sign"] == "+" else -1, float(m["amount"]), bool(m["pct"]))


def trip_reason(rule: Rule, result: Comparison) -> str | None:
    """The one-line reason the rule trips, or None when it holds."""
    if rule.kind == "new-hazards":
        if not result.hazards_added:
            return None
        shown = ", ".join(str(k) for k in result.hazards_added[:3])
        more = f" and {len(result.hazards_added) - 3} more" if len(result.hazards_added) > 3 else ""
        return f"{rule.text}: {len(result.hazards_added)} new hazard(s): {shown}{more}"
    if rule.kind == "verdict":
        return f"{rule.text}: verdict got worse: {result.base_verdict} -> {result.new_verdict}" if result.verdict_worse else None
    d = result.delta(rule.metric or "")
    if d.base is None:
        return None  # nothing to regress from
    if d.new is None:  # fail closed: what the rule guards is gone (e.g. capture now fails)
        return f"{rule.text}: {d.metric} was {d.base:g} and is no longer measured"
    moved = (d.relative or 0.0) * 100 if rule.percent else (d.change or 0.0)
    if moved * rule.direction <= rule.amount:
        return None
    by = f"{moved:+.1f}%" if rule.percent else f"{moved:+g}"
    return f"{rule.text}: {d.metric} {d.base:g} -> {d.new:g} ({by})"


def evaluate(rules: list[Rule], result: Comparison) -> list[str]:
    return [reason for rule in rules if (reason := trip_reason(rule, result)) is not None]
