"""Significance before "changed": step-time rules gate on the raw samples recorded on the H200.

The samples are the ``wall_us`` of the burst ``timing`` events of recorded runs
(tests/data/runs): the samples a report of that run carries as ``samples_us``. Reports that
carry them are built from the recorded JSON reports.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.analysis.comparison import ALPHA, compare, gate, p_text, parse_rule, significance_of
from launchprof.analysis import analyse
from launchprof.run import load_run
from launchprof.model.core import Report
from launchprof.model.step_timing import Stats

RUNS = reports.DATA / "runs"
runner = CliRunner()


def recorded_samples(run: str) -> tuple[list[float], list[float]]:
    """(eager, replay) burst wall samples of one recorded run, in burst order; fails when the
    recording is missing or its report would carry other samples."""
    path = RUNS / f"{run}.lprun"
    assert path.exists(), f"recorded run {path} is missing"
    run_ = load_run(path)
    burst = [e for e in run_.events if e["type"] == "timing" and e.get("mode") == "burst"]
    eager = [x for e in burst if e["kind"] == "eager" for x in e["wall_us"]]
    replay = [x for e in burst if e["kind"] == "replay" for x in e["wall_us"]]
    assert len(eager) >= 10 and len(replay) >= 10, f"{run}: too few recorded samples"
    report = analyse(run_)
    assert (report.eager.samples_us, report.replay.samples_us) == (eager, replay)  # what compare reads
    return eager, replay


def _stats(samples: list[float]) -> Stats:
    return Stats(float(np.median(samples)), float(np.percentile(samples, 10)), float(np.percentile(samples, 90)), len(samples))


def with_samples(report: Report, eager: list[float], replay: list[float] | None = None) -> Report:
    out = dataclasses.replace(report, eager=dataclasses.replace(report.eager, step_us=_stats(eager), samples_us=list(eager)))
    if replay is not None and report.replay is not None:
        out = dataclasses.replace(out, replay=dataclasses.replace(report.replay, step_us=_stats(replay), samples_us=list(replay)))
    return out


@pytest.fixture
def decode() -> tuple[Report, list[float], list[float]]:
    report = reports.recorded_reports()["decode_loop.report.json"]
    eager, replay = recorded_samples("decode_loop")
    return report, eager, replay


def test_same_samples_are_not_a_change(decode: tuple[Report, list[float], list[float]]) -> None:
    report, eager, replay = decode
    sig = significance_of(eager, list(reversed(eager)))
    assert sig.significant is False and sig.p_value == pytest.approx(1.0) and sig.ratio == pytest.approx(1.0)
    assert sig.ratio_low is not None and sig.ratio_high is not None and sig.ratio_low <= 1.0 <= sig.ratio_high


def test_a_ten_percent_slowdown_is_significant_and_trips(decode: tuple[Report, list[float], list[float]]) -> None:
    report, eager, replay = decode
    base = with_samples(report, eager, replay)
    new = with_samples(report, [x * 1.10 for x in eager], replay)
    result = compare(base, new)
    sig = result.delta("eager_step_us").significance
    assert sig is not None and sig.significant is True and sig.p_value is not None and sig.p_value < ALPHA
    assert sig.ratio == pytest.approx(1.10) and sig.ratio_low is not None and sig.ratio_low > 1.0
    outcome = gate([parse_rule("eager_step_us:+5%")], result)
    assert len(outcome.tripped) == 1 and outcome.tripped[0].startswith("eager_step_us:+5%: eager_step_us ")
    assert outcome.within_noise == []
    # the replay samples did not move: tested, and not significant
    assert result.delta("replay_step_us").significance.significant is False  # type: ignore[union-attr]


def noise_pair(eager: list[float]) -> tuple[list[float], list[float], str, float]:
    """Odd and even calls of one recorded run, the slower half as "new": one distribution, two
    medians that differ by chance. Returns (base, new, a --fail-on rule whose threshold is half
    their relative difference, so the threshold alone would trip, and the Mann-Whitney p-value
    read here with scipy directly)."""
    halves = sorted((eager[1::2], eager[0::2]), key=lambda h: float(np.median(h)))
    base, new = halves
    moved = float(np.median(new) / np.median(base) - 1)
    assert moved > 0, "the two halves have the same median: no change to judge"
    p = float(mannwhitneyu(new, base, alternative="two-sided").pvalue)
    assert p >= ALPHA, f"odd and even calls of the recorded run differ significantly (p = {p:.3g}): the run drifted"
    return base, new, f"eager_step_us:+{moved * 50:.6f}%", p


def test_threshold_exceeded_within_noise_does_not_trip(decode: tuple[Report, list[float], list[float]]) -> None:
    """Odd and even calls of one recorded run: medians apart by chance, the same distribution."""
    report, eager, _ = decode
    base_samples, new_samples, rule, p = noise_pair(eager)
    base, new = with_samples(report, base_samples), with_samples(report, new_samples)
    result = compare(base, new)
    d = result.delta("eager_step_us")
    assert d.relative is not None and d.relative * 100 > parse_rule(rule).amount  # the threshold alone would trip
    assert gate([parse_rule(rule)], compare(base, with_samples(report, [x * 1.10 for x in base_samples]))).tripped  # a real change does
    outcome = gate([parse_rule(rule)], result)
    assert outcome.tripped == []
    assert len(outcome.within_noise) == 1 and f"not significant ({p_text(p)}), not counted as a change" in outcome.within_noise[0]


def test_without_samples_the_threshold_alone_decides() -> None:
    base = reports.graphs_help()
    slower = dataclasses.replace(base, eager=dataclasses.replace(base.eager, step_us=Stats(1943.2, 1900.0, 2000.0, 25)))
    result = compare(base, slower)
    sig = result.delta("eager_step_us").significance
    assert sig is not None and sig.significant is None and sig.reason == "the reports keep no raw samples"
    assert gate([parse_rule("eager_step_us:+5%")], result).tripped == ["eager_step_us:+5%: eager_step_us 1843.2 -> 1943.2 (+5.4%)"]


def test_too_few_samples_is_not_tested() -> None:
    sig = significance_of([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0, 8.0])
    assert sig.significant is None and sig.reason == "too few samples (3 and 5)"


def test_interval_is_reproducible(decode: tuple[Report, list[float], list[float]]) -> None:
    _, eager, replay = decode
    first, second = significance_of(eager, replay), significance_of(eager, replay)
    assert first == second and first.significant is True and first.ratio is not None and first.ratio < 0.3


def test_every_format_says_not_significant(tmp_path: Path, decode: tuple[Report, list[float], list[float]], monkeypatch: pytest.MonkeyPatch) -> None:
    report, eager, _ = decode
    base_samples, new_samples, rule, p = noise_pair(eager)
    base, new = with_samples(report, base_samples), with_samples(report, new_samples)
    paths = []
    for name, r in (("base", base), ("new", new)):
        data = dataclasses.asdict(r)  # keeps samples_us, as the typed report will
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(data), encoding="utf-8")
    # session.load_report drops fields it does not know; read through a loader that keeps them
    loaded = {str(p): r for p, r in zip(paths, (base, new))}
    import launchprof.commands.compare as command

    monkeypatch.setattr(command, "load_any", lambda path: loaded[str(path)])
    md = tmp_path / "c.md"
    result = runner.invoke(app, ["compare", *map(str, paths), "--fail-on", rule, "-f", "md", "-o", str(md), "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    sig = data["metrics"]["eager_step_us"]["significance"]
    assert sig["tested"] is True and sig["significant"] is False and math.isclose(sig["p_value"], p, rel_tol=1e-9)
    assert data["tripped"] == [] and len(data["within_noise"]) == 1 and data["significance_note"] == (
        "significance of replay_step_us could not be tested (the reports keep no raw samples): judged by the threshold alone"
    )
    assert "within noise" in result.stderr
    assert "| Eager step |" in md.read_text(encoding="utf-8") and f"not significant ({p_text(p)})" in md.read_text(encoding="utf-8")
