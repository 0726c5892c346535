"""The prediction against the replay the H200 then measured, on the runs of two later calls
(tests/data/predict, 2026-12-01 22:40-22:52 UTC, this version's worker in the 22:49 call):

- ``*.recheck``: four small samples whose worker timed the host loop after its bursts;
- ``*.predict``: nine samples whose worker sampled it between the bursts.

Each carries the quick calibration ``analyze`` measured on a freshly started machine
(eager op 7.12 and 10.42 µs, graph launch 9.85 and 14.80 µs; no traced empty kernel), and
the host in those processes ran at 7.0 to 12.4 µs per eager op. They check the two rules
these runs motivated, against the measurement:

- the profile's launch costs scale to the run's host speed;
- without a traced empty kernel the per-node excess is 0, not the whole gap (1.45 µs a
  node in the 22:49 calibration).
"""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path

import pytest

import launchprof.analysis.prediction as prediction
from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.run import load_run

PREDICT = Path(__file__).parent / "data" / "predict"


def _runs() -> list[Path]:
    paths = sorted(PREDICT.glob("*.lprun"))
    if len(paths) < 10:
        raise FileNotFoundError(f"expected the 13 recorded runs under {PREDICT}, found {len(paths)}")
    return paths


def _errors(profile_of=lambda p: p) -> dict[str, float]:
    """Predicted over measured speedup, minus 1, for every run that measured a replay."""
    out = {}
    for path in _runs():
        run = load_run(path)
        report = analyse(run, profile_of(stored_profile(run.profile)))
        if report.speedup and report.replay and report.replay.step_us and report.prediction:
            out[path.stem] = report.prediction.median / report.speedup.median - 1
    assert len(out) >= 10, sorted(out)
    return out


def _rms(errors: dict[str, float]) -> float:
    return statistics.fmean(e * e for e in errors.values()) ** 0.5


def test_every_prediction_is_within_20_percent_of_the_measured_speedup():
    errors = _errors()
    assert all(abs(e) <= 0.20 for e in errors.values()), errors
    assert statistics.median(abs(e) for e in errors.values()) < 0.10, errors


def test_without_the_host_scaling_the_same_runs_are_further_off(monkeypatch):
    scaled = _errors()
    monkeypatch.setattr(prediction, "host_scale", lambda ev, profile: None)
    unscaled = _errors()
    assert _rms(unscaled) > 1.5 * _rms(scaled), (unscaled, scaled)
    assert sum(abs(e) > 0.20 for e in unscaled.values()) >= 3, unscaled


def test_counting_the_whole_gap_per_node_would_put_them_low():
    """The earlier rule: excess = gap - (empty kernel or 0). An empty kernel of 0 µs gives it back."""
    from launchprof.crossover.profile import Interval

    def whole_gap(profile):
        return dataclasses.replace(profile, empty_kernel_us=Interval(0.0, 0.0, 0.0))

    now, before = _errors(), _errors(whole_gap)
    assert statistics.median(before.values()) < -0.15, before  # replay estimated too dear: speedups low
    assert _rms(before) > 1.5 * _rms(now), (before, now)


@pytest.mark.parametrize("name", ["two_streams_ok.predict", "side_effects.predict"])
def test_the_between_bursts_runs_hold_one_sample_per_burst(name):
    run = load_run(PREDICT / f"{name}.lprun")
    speed = [e for e in run.events if e.get("type") == "host-speed"]
    bursts = {e["burst"] for e in run.events if e.get("type") == "timing" and e.get("mode") == "burst"}
    assert len(speed) == 1 and speed[0]["when"] == "between the bursts"
    assert len(speed[0]["samples_us"]["64"]) == len(bursts) >= 2
