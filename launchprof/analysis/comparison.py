"""Compare two reports as data: metric deltas, their significance, hazards added and removed,
warnings that the runs differ in kind, and the ``--fail-on`` rules.

Nothing here prints: :mod:`launchprof.render.compare_text` renders the result. Three ideas keep
the gate honest (pyperf's lessons):

- A step time moved only when the raw samples say so: when both reports keep them, a
  threshold rule on a step time trips only if a two-sided Mann-Whitney U test also finds
  the difference significant (alpha 0.05). The ratio of medians comes with a bootstrap
  interval so the size of the change is shown with its uncertainty.
- Runs of a different kind (another script, target, GPU, driver, torch or CPU, or a loaded
  host) are named, one warning each, because their timings may not be comparable.
- A hazard is the same hazard when kind, project-relative file and code text are the same
  (:func:`launchprof.model.hazard_identity.hazard_fingerprint`): an edit above it does not make it new.

Fields that only newer reports carry (``samples_us``, ``fingerprint``, ``project_root``,
the extended machine metadata) are read with ``getattr(..., None)``, so old reports still compare.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from launchprof.analysis.verdict import verdict_rank
from launchprof.errors import UsageError
from launchprof.model.hazard_identity import identity_from, match_key
from launchprof.common.project import relative_to_root
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report
from launchprof.model.step_timing import PROFILED, Stats, basis_of
from launchprof.model.stats import speedup_of

ALPHA = 0.05  # two-sided significance level of the Mann-Whitney U test
MIN_SAMPLES = 5  # below this, neither test can tell anything from noise


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: str  # "us", "count", "fraction", "ratio": how to show it
    higher_is_better: bool
    get: Callable[[Report], float | None]
    samples: Callable[[Report], Sequence[float] | None] | None = None  # raw values behind ``get``
    # How the report obtained the figure (model.step_timing.basis_of): two of different bases
    # are never compared, so a count of graph nodes is no "+5% kernels" against a traced count.
    basis: Callable[[Report], str] = lambda r: PROFILED


def _stat(stats_: Stats | None) -> float | None:
    return None if stats_ is None else stats_.median


def _samples(part: Any) -> Sequence[float] | None:
    return None if part is None else getattr(part, "samples_us", None)


def _eager_basis(field: str) -> Callable[[Report], str]:
    return lambda r: basis_of(r.eager, field)


def _launch_gap(r: Report) -> float | None:
    """The profiled median gap; without a trace, the mean gap the CUDA events give (basis events)."""
    if r.eager is None:
        return None
    if basis_of(r.eager, "launch_gap_mean_us") != PROFILED:
        return getattr(r.eager, "launch_gap_mean_us", None)
    return _stat(r.eager.launch_gap_us)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("kernels_per_step", "Kernels per step", "count", False, lambda r: r.eager and r.eager.kernels_per_step, basis=_eager_basis("kernels_per_step")),
        Metric("gpu_idle_fraction", "GPU idle fraction", "fraction", False, lambda r: r.eager and r.eager.gpu_idle_fraction, basis=_eager_basis("gpu_idle_fraction")),
        Metric("launch_gap_us", "Launch gap", "us", False, _launch_gap, basis=_eager_basis("launch_gap_mean_us")),
        Metric("eager_step_us", "Eager step", "us", False, lambda r: r.eager and _stat(r.eager.step_us), lambda r: _samples(r.eager)),
        Metric("replay_step_us", "Replay step", "us", False, lambda r: r.replay and _stat(r.replay.step_us), lambda r: _samples(r.replay)),
        Metric("speedup", "Speedup", "ratio", True, lambda r: r.speedup and r.speedup.median),
        Metric("graph_nodes", "Graph nodes", "count", False, lambda r: r.replay and r.replay.graph_nodes),
        Metric("instantiate_us", "Instantiate", "us", False, lambda r: r.replay and r.replay.instantiate_us),
    )
}

MACHINE_FIELDS = ("gpu", "driver", "cuda", "torch", "cpu_model")
_MACHINE_LABELS = {"gpu": "GPU", "driver": "driver", "cuda": "CUDA", "torch": "torch", "cpu_model": "CPU"}


# --- significance ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Significance:
    """Whether a change in a sampled metric is more than noise; ``significant`` None: not tested."""

    significant: bool | None
    p_value: float | None = None
    ratio: float | None = None  # median(new) / median(base)
    ratio_low: float | None = None  # 95% bootstrap interval of that ratio
    ratio_high: float | None = None
    n_base: int = 0
    n_new: int = 0
    reason: str | None = None  # why it was not tested


def p_text(p: float) -> str:
    """``p = 0.31``; tiny values as ``p < 0.001`` rather than a false precision."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def significance_of(base: Sequence[float] | None, new: Sequence[float] | None) -> Significance:
    """Mann-Whitney U (two-sided) on the raw samples, and a bootstrap interval of the median ratio."""
    if not base or not new:
        return Significance(None, reason="the reports keep no raw samples")
    b, n = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    b, n = b[np.isfinite(b)], n[np.isfinite(n)]
    if len(b) < MIN_SAMPLES or len(n) < MIN_SAMPLES:
        return Significance(None, n_base=len(b), n_new=len(n), reason=f"too few samples ({len(b)} and {len(n)})")
    p = float(stats.mannwhitneyu(n, b, alternative="two-sided").pvalue)
    # new/base: the ratio of medians and its percentile bootstrap, as the speedup's (launchprof.model.stats)
    ratio = speedup_of(n, b)  # seeded (launchprof.model.stats.SEED): the same reports give the same interval
    if ratio is None:  # a base median of zero: no ratio to give
        return Significance(p < ALPHA, p, None, None, None, len(b), len(n))
    low, high = ratio.low, ratio.high
    return Significance(p < ALPHA, p, ratio.median, low if math.isfinite(low) else None, high if math.isfinite(high) else None, len(b), len(n))


# --- deltas ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    base: float | None
    new: float | None
    significance: Significance | None = None  # None: the metric keeps no samples (counts, ratios)
    bases: tuple[str, str] = (PROFILED, PROFILED)  # how each report obtained the figure

    @property
    def comparable(self) -> bool:
        """Both figures were obtained the same way (model.step_timing.basis_of)."""
        return self.bases[0] == self.bases[1]

    @property
    def change(self) -> float | None:
        if not self.comparable:
            return None
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

    @property
    def not_significant(self) -> bool:
        """The samples were tested and the change is within noise."""
        return self.significance is not None and self.significance.significant is False


def _delta(metric: Metric, base: Report, new: Report) -> MetricDelta:
    sig = None
    if metric.samples is not None:
        sig = significance_of(metric.samples(base), metric.samples(new))
    return MetricDelta(metric.name, metric.get(base), metric.get(new), sig, (metric.basis(base), metric.basis(new)))


# --- hazards ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HazardKey:
    kind: str
    file: str | None
    line: int | None
    severity: str
    message: str
    fingerprint: str | None = None  # None: no code text known, so the line identifies it

    @property
    def identity(self) -> Hashable:
        return match_key(self.kind, self.file, self.line, self.fingerprint)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file or "(no file)"
        return f"{self.kind} at {where}"


def _relative_file(file: str | None, report: Report) -> str | None:
    """Relative to the project root when the report names it; else to the script's folder."""
    if not file:
        return None
    root = getattr(report, "project_root", None)
    if root:
        return relative_to_root(file, Path(root))
    script = str(report.script)
    folder = Path(script).parent if script.endswith(".py") else Path(script)  # lint: script is a folder
    try:
        return Path(file).relative_to(folder).as_posix()
    except ValueError:
        return _from_named_folder(Path(file), folder)


def _from_named_folder(path: Path, folder: Path) -> str:
    """An absolute hazard path in a report that names neither its root nor an absolute script
    (schema 1): from the folder the script was named by (``sample_models/...``), which is
    what a report with a project root gives for the same run; as it is when that folder is
    not in it."""
    parts = folder.parts
    if path.is_absolute() and parts and not folder.is_absolute():
        for i in range(len(path.parts) - len(parts), 0, -1):
            if path.parts[i : i + len(parts)] == parts:
                return Path(*path.parts[i:]).as_posix()
    return path.as_posix()


def hazard_key(h: Hazard, report: Report) -> HazardKey:
    file = _relative_file(h.file, report)
    return HazardKey(str(h.kind), file, h.line, str(h.severity), h.message, identity_from(h, file))


def _unmatched(keys: list[HazardKey], others: list[HazardKey]) -> list[HazardKey]:
    """``keys`` not in ``others``, counting repeats (two identical lines are two hazards)."""
    left = Counter(k.identity for k in others)
    out = []
    for k in keys:
        if left[k.identity] > 0:
            left[k.identity] -= 1
        else:
            out.append(k)
    return out


# --- runs of a different kind ----------------------------------------------------------------


def _script_key(report: Report, both_rooted: bool) -> str:
    root = getattr(report, "project_root", None)
    return relative_to_root(report.script, Path(root)) if both_rooted and root else Path(str(report.script)).name


def machine_differences(base: Report, new: Report) -> list[str]:
    """``field: base -> new`` for each machine field both reports know and that differs."""
    out = []
    for name in MACHINE_FIELDS:
        a, b = getattr(base.machine, name, None), getattr(new.machine, name, None)
        if a is not None and b is not None and a != b:
            out.append(f"{name}: {a} -> {b}")
    return out


def _load_warnings(side: str, report: Report) -> list[str]:
    m = report.machine
    load, cores, others = getattr(m, "load_avg", None), getattr(m, "cpu_cores", None), getattr(m, "gpu_other_processes", None)
    out = []
    if load is not None and cores and load > cores:
        out.append(f"{side} run: the host was loaded (load average {load:g} on {cores} cores)")
    if others:
        out.append(f"{side} run: other processes were using the GPU")
    return out


def _target_key(target: str | None) -> str | None:
    """One function however it was named: a function found by its @launchprof.target
    decorator is recorded as "@launchprof.target update", by --target as "update"."""
    name = (target or "").removeprefix("@launchprof.target").strip()
    return name or None


def kind_warnings(base: Report, new: Report) -> list[str]:
    """One line per way the two runs differ in kind: their timings may not be comparable."""
    rooted = bool(getattr(base, "project_root", None) and getattr(new, "project_root", None))
    out = []
    a, b = _script_key(base, rooted), _script_key(new, rooted)
    if a != b:
        out.append(f"different script: {a} -> {b}")
    if _target_key(base.target) != _target_key(new.target):
        out.append(f"different target: {base.target or '(none)'} -> {new.target or '(none)'}")
    for name in MACHINE_FIELDS:
        x, y = getattr(base.machine, name, None), getattr(new.machine, name, None)
        if x is not None and y is not None and x != y:
            out.append(f"different {_MACHINE_LABELS[name]}: {x} -> {y}")
    return out + _load_warnings("base", base) + _load_warnings("new", new)


# --- the comparison --------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    base_verdict: str
    new_verdict: str
    deltas: list[MetricDelta]
    hazards_added: list[HazardKey]
    hazards_removed: list[HazardKey]
    machine_differences: list[str]  # "gpu: NVIDIA H100 -> NVIDIA H200"
    warnings: list[str] = field(default_factory=list)  # runs of a different kind, one line each

    @property
    def verdict_worse(self) -> bool:
        """Lower rank (launchprof.analysis.verdict.RANKED: graphs-help down to not-capturable), or a
        ranked verdict replaced by one that measured no graph at all."""
        base, new = verdict_rank(self.base_verdict), verdict_rank(self.new_verdict)
        if base is None:
            return False
        return new is None or new < base

    def delta(self, metric: str) -> MetricDelta:
        return next(d for d in self.deltas if d.metric == metric)

    @property
    def not_compared(self) -> list[MetricDelta]:
        """The metrics the two reports obtained in different ways: shown, never compared."""
        return [d for d in self.deltas if not d.comparable]

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: base, new, change, relative change, worse, p value."""
        rows = [
            {
                "metric": d.metric, "base": d.base, "new": d.new, "change": d.change, "relative": d.relative, "worse": d.worse,
                "p_value": d.significance.p_value if d.significance else None, "base_basis": d.bases[0], "new_basis": d.bases[1],
            }
            for d in self.deltas
        ]
        return pd.DataFrame(rows).set_index("metric")


def compare(base: Report, new: Report) -> Comparison:
    base_keys = [hazard_key(h, base) for h in base.hazards]
    new_keys = [hazard_key(h, new) for h in new.hazards]
    return Comparison(
        base_verdict=str(base.verdict),
        new_verdict=str(new.verdict),
        deltas=[_delta(m, base, new) for m in METRICS.values()],
        hazards_added=_unmatched(new_keys, base_keys),
        hazards_removed=_unmatched(base_keys, new_keys),
        machine_differences=machine_differences(base, new),
        warnings=kind_warnings(base, new),
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


def threshold_reason(rule: Rule, result: Comparison) -> str | None:
    """Why the rule's threshold is exceeded, or None; significance is not considered here."""
    if rule.kind == "new-hazards":
        if not result.hazards_added:
            return None
        shown = ", ".join(str(k) for k in result.hazards_added[:3])
        more = f" and {len(result.hazards_added) - 3} more" if len(result.hazards_added) > 3 else ""
        return f"{rule.text}: {len(result.hazards_added)} new hazard(s): {shown}{more}"
    if rule.kind == "verdict":
        return f"{rule.text}: verdict got worse: {result.base_verdict} -> {result.new_verdict}" if result.verdict_worse else None
    d = result.delta(rule.metric or "")
    if d.base is None or not d.comparable:
        return None  # nothing to regress from, or figures obtained in different ways (a profiled count against a graph's)
    if d.new is None:  # fail closed: what the rule guards is gone (e.g. capture now fails)
        return f"{rule.text}: {d.metric} was {d.base:.5g} and is no longer measured"
    moved = (d.relative or 0.0) * 100 if rule.percent else (d.change or 0.0)
    if moved * rule.direction <= rule.amount:
        return None
    by = f"{moved:+.1f}%" if rule.percent else f"{moved:+g}"
    return f"{rule.text}: {d.metric} {d.base:.5g} -> {d.new:.5g} ({by})"


def _within_noise(rule: Rule, result: Comparison) -> bool:
    return rule.kind == "metric" and result.delta(rule.metric or "").not_significant


@dataclass(frozen=True)
class GateResult:
    tripped: list[str]  # rules that make the exit code 1
    within_noise: list[str]  # thresholds exceeded by a change the samples call not significant


def gate(rules: list[Rule], result: Comparison) -> GateResult:
    tripped, noise = [], []
    for rule in rules:
        reason = threshold_reason(rule, result)
        if reason is None:
            continue
        if _within_noise(rule, result):
            sig = result.delta(rule.metric or "").significance
            p = f" ({p_text(sig.p_value)})" if sig and sig.p_value is not None else ""
            noise.append(f"{reason}: not significant{p}, not counted as a change")
        else:
            tripped.append(reason)
    return GateResult(tripped, noise)


def evaluate(rules: list[Rule], result: Comparison) -> list[str]:
    return gate(rules, result).tripped
