"""The prediction against what the H200 measured, on the recorded runs.

Each captured run holds both the eager trace the prediction is made from and the replay
that was then measured, so the model is checked against an independent measurement of
the same step in the same process. The profile is the one each run carries: the quick
calibration its worker measured on that H200 before the script ran. Before the
double-counted synchronisation and RNG prologue were taken out (analysis/prediction.py),
the replay estimates of the small steps were 1.8-2.5x the measured replay; these bounds
fail on that model.

Two runs are known misses, named here so that a new one fails the test: dropout_train
(the replay is 28% slower than estimated, 41.1 against 29.6 µs, because it was recorded
before the worker said whether a step draws CUDA random numbers: the RNG prologue's two
fills are then not counted; see the test below) and batch_reduce (a bucketed sample whose
replay copies padded inputs; 40% slower than estimated). Recorded 2026-12-01 (the
bucket samples before the CUPTI-teardown fix, the others with it)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import statistics

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from tests.recorded import load, run_names

# Known misses of the model (see the module docstring); every other run must hold.
KNOWN_MISSES = frozenset({"dropout_train", "batch_reduce"})


def reports() -> dict[str, object]:
    out = {}
    for name in run_names():
        run = load(name)
        profile = stored_profile(run.profile)
        assert profile is not None, f"{name}: the recorded run carries no device profile"
        report = analyse(run, profile)
        if report.replay is not None and report.replay.step_us is not None and report.prediction is not None:
            out[name] = report
    return out


@pytest.fixture(scope="module")
def captured() -> dict[str, object]:
    found = reports()
    assert len(found) >= 5, f"too few recorded runs with a replay and a prediction: {sorted(found)}"
    return found


def test_the_replay_estimate_is_close_to_the_measured_replay(captured):
    errors = {}
    for name, r in captured.items():
        estimate, measured = r.prediction.replay_step_us, r.replay.step_us.median
        errors[name] = estimate / measured - 1.0
    assert statistics.median(abs(e) for e in errors.values()) < 0.15, errors
    misses = {name for name, e in errors.items() if abs(e) >= 0.25}
    assert misses <= KNOWN_MISSES, errors
    assert all(abs(e) < 0.5 for e in errors.values()), errors


def test_the_predicted_speedup_is_within_a_factor_of_the_measured_one(captured):
    ratios = {name: r.prediction.median / (r.eager.step_us.median / r.replay.step_us.median) for name, r in captured.items()}
    assert {name for name, q in ratios.items() if not 0.7 < q < 1.4} <= KNOWN_MISSES, ratios
    assert all(0.6 < q < 1.8 for q in ratios.values()), ratios
    assert statistics.median(abs(q - 1.0) for q in ratios.values()) < 0.15, ratios


def test_the_interval_spans_the_eager_steps_drift_between_bursts(captured):
    for name, r in captured.items():
        run = load(name)
        from launchprof.evidence import parse_events

        medians = parse_events(run.events).burst_medians_us.get("eager") or []
        if len(medians) < 2 or r.eager.timing != "burst":
            continue
        replay = r.prediction.replay_step_us
        # The interval carries the speedup each burst's eager median would give; its ends are
        # percentiles of sampled draws (predict.speedup_interval), so they may fall short of
        # the extreme burst by a little: 2% is allowed, a narrow interval misses by far more.
        lo, hi = min(medians) / replay, max(medians) / replay
        assert r.prediction.low <= lo * 1.02 and r.prediction.high >= hi * 0.98, (name, r.prediction, lo, hi)


def _with_cuda_rng(run, torch_version: str | None = None):
    """The run as a current worker writes it: its ``mutations`` event says whether a warm-up
    call advanced the default CUDA generator (and, optionally, another torch version)."""
    events = []
    for e in run.events:
        if e.get("type") == "mutations":
            e = {**e, "cuda_rng": True}
        if torch_version and e.get("type") == "machine":
            e = {**e, "machine": {**e["machine"], "torch": torch_version}}
        events.append(e)
    return dataclasses.replace(run, events=events)


def test_the_rng_prologue_is_in_the_recorded_replay_trace():
    """The independent evidence for counting it: the H200's profiled replay of dropout_train
    launches two one-element fills (torch's seed and offset for the graph's Philox) before
    the graph's own kernels, which the eager step does not have."""
    run = load("dropout_train")
    name = next(k for k in run.traces if k.endswith("trace-replay.json.gz"))
    rows = json.loads(gzip.decompress(run.traces[name]))["traceEvents"]
    kernels = sorted((e for e in rows if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    assert [("FillFunctor" in e["name"]) for e in kernels[:3]] == [True, True, False]
    eager = analyse(run, stored_profile(run.profile)).eager
    assert eager.kernels_per_step == len(kernels) - 2  # the eager step has no fills


def test_counting_the_rng_prologue_closes_the_dropout_miss():
    run = load("dropout_train")
    profile = stored_profile(run.profile)
    before = analyse(run, profile)
    after = analyse(_with_cuda_rng(run), profile)
    measured = after.replay.step_us.median
    assert abs(before.prediction.replay_step_us / measured - 1) > 0.2  # the recorded miss
    assert abs(after.prediction.replay_step_us / measured - 1) < 0.1, (after.prediction.replay_step_us, measured)
    speedup = after.eager.step_us.median / measured
    assert abs(after.prediction.median / speedup - 1) < 0.2
    assert "RNG fills" in after.prediction.explanation
    # the two fills cost what two eager ops cost in the profile, no more
    added = after.prediction.replay_step_us - before.prediction.replay_step_us
    assert added == pytest.approx(2 * profile.eager_op_us.median)


def test_before_torch_2_7_every_replay_paid_the_fills_so_none_is_added():
    """pytorch#143777 (torch 2.7) skips the prologue for graphs without RNG; before it, the
    crossover's own graphs paid it too, so the profile's LaunchGraph already holds it."""
    run = load("dropout_train")
    profile = stored_profile(run.profile)
    old = analyse(_with_cuda_rng(run, "2.6.0+cu124"), profile)
    assert old.prediction.replay_step_us == pytest.approx(analyse(run, profile).prediction.replay_step_us)
    assert "RNG fills" not in old.prediction.explanation


def _with_host_speed(run, eager_op_us: float):
    """The run with the ``host-speed`` event a current worker writes after its bursts."""
    end = next(i for i, e in enumerate(run.events) if e.get("type") == "plan-end")
    event = {"type": "host-speed", "t": run.events[end]["t"], "eager_op_us": eager_op_us, "counts": [64, 256]}
    return dataclasses.replace(run, events=[*run.events[:end], event, *run.events[end:]])


def test_a_host_that_ran_at_another_speed_than_the_profile_is_said():
    """The calibration measured in an H200's first minute read 9.07 µs per eager op, later
    sweeps that day 6.4-6.6 µs: a run on the warm host, predicted from that profile, counts
    launches too dear. The run's own timing of the profile's loop tells."""
    run = load("decode_loop")
    profile = stored_profile(run.profile)
    then = profile.eager_op_us.median
    same = analyse(_with_host_speed(run, then * 1.05), profile)
    assert not any("than when the device profile was measured" in n for n in same.notes)
    fast = analyse(_with_host_speed(run, then / 1.4), profile)
    note = next(n for n in fast.notes if "than when the device profile was measured" in n)
    assert "ran faster" in note and "prediction low" in note and f"{then:.1f} µs in the profile" in note
    slow = analyse(_with_host_speed(run, then * 1.4), profile)
    assert any("ran slower" in n and "prediction high" in n for n in slow.notes)
    assert fast.prediction.median == same.prediction.median  # said, not corrected
    assert not any("device profile was measured" in n for n in analyse(run, profile).notes)  # older runs: nothing
