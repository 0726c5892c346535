"""The prediction against what the H200 measured, on the recorded runs.

Each captured run holds both the eager trace the prediction is made from and the replay
that was then measured, so the model is checked against an independent measurement of
the same step in the same process. The profile is the one each run carries: the quick
calibration its worker measured on that H200 before the script ran. Before the
double-counted synchronisation and RNG prologue were taken out (analysis/prediction.py),
the replay estimates of the small steps were 1.8-2.5x the measured replay; these bounds
fail on that model.

One run is a known miss, named here so that a new one fails the test: batch_reduce (a
bucketed sample whose replay copies padded inputs; recorded before the CUPTI-teardown fix,
with a calibration profile). The other runs but bucketed_decode (the same earlier call as batch_reduce, with no
``host-speed`` event: its prediction is not scaled) were recorded on 2026-12-01
22:24-22:30 UTC (gpu-check --analyze), with the ``host-speed`` (five samples after the
bursts) and ``cuda_rng`` fields: dropout_train, a miss of 28% while its RNG prologue went
uncounted, now holds. The known miss is held to a looser bound (0.5-2.5x) than the others
(0.8-1.25x) and left out of the interval test.
"""

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
KNOWN_MISSES = frozenset({"batch_reduce"})


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
    assert {name for name, q in ratios.items() if not 0.8 < q < 1.25} <= KNOWN_MISSES, ratios
    assert all(0.5 < q < 2.5 for q in ratios.values()), ratios  # a known miss is still the right size
    assert statistics.median(abs(q - 1.0) for q in ratios.values()) < 0.15, ratios


def test_the_interval_spans_the_eager_steps_drift_between_bursts(captured):
    for name, r in captured.items():
        run = load(name)
        from launchprof.run.evidence import parse_events

        medians = parse_events(run.events).burst_medians_us.get("eager") or []
        if len(medians) < 2 or r.eager.timing != "burst" or name in KNOWN_MISSES:
            continue
        replay = r.prediction.replay_step_us
        # The interval carries the speedup each burst's eager median would give; its ends are
        # percentiles of sampled draws (predict.speedup_interval), so they may fall short of
        # the extreme burst by a little: 2% is allowed, a narrow interval misses by far more.
        lo, hi = min(medians) / replay, max(medians) / replay
        assert r.prediction.low <= lo * 1.02 and r.prediction.high >= hi * 0.98, (name, r.prediction, lo, hi)


def _with_cuda_rng(run, draws: bool = True, torch_version: str | None = None):
    """The run with its ``mutations`` event saying whether a warm-up call advanced the default
    CUDA generator (as a current worker writes it; ``draws=False`` as an older worker's
    run reads, with no such field), and, optionally, another torch version."""
    events = []
    for e in run.events:
        if e.get("type") == "mutations":
            e = {**e, "cuda_rng": True} if draws else {k: v for k, v in e.items() if k != "cuda_rng"}
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
    assert any(e.get("type") == "mutations" and e.get("cuda_rng") is True for e in run.events)  # the worker saw the draws
    profile = stored_profile(run.profile)
    before = analyse(_with_cuda_rng(run, draws=False), profile)  # as the run read before the field
    after = analyse(run, profile)
    measured = after.replay.step_us.median
    assert abs(after.prediction.replay_step_us / measured - 1) < 0.1, (after.prediction.replay_step_us, measured)
    assert before.prediction.replay_step_us < 0.85 * measured  # without the fills: short by more than 15%
    speedup = after.eager.step_us.median / measured
    assert abs(after.prediction.median / speedup - 1) < 0.2
    assert "RNG fills" in after.prediction.explanation and "RNG fills" not in before.prediction.explanation
    # the two fills cost what two eager ops cost at this run's host speed, no more
    added = after.prediction.replay_step_us - before.prediction.replay_step_us
    now = next(e["eager_op_us"] for e in run.events if e.get("type") == "host-speed")
    assert added == pytest.approx(2 * now)


def test_before_torch_2_7_every_replay_paid_the_fills_so_none_is_added():
    """pytorch#143777 (torch 2.7) skips the prologue for graphs without RNG; before it, the
    crossover's own graphs paid it too, so the profile's LaunchGraph already holds it."""
    run = load("dropout_train")
    profile = stored_profile(run.profile)
    old = analyse(_with_cuda_rng(run, True, "2.6.0+cu124"), profile)
    assert old.prediction.replay_step_us == pytest.approx(analyse(_with_cuda_rng(run, draws=False), profile).prediction.replay_step_us)
    assert "RNG fills" not in old.prediction.explanation


def _with_host_speed(run, eager_op_us: float | None):
    """The run with its ``host-speed`` event set to ``eager_op_us`` (None: without one, as
    runs recorded before the event read)."""
    events = [e for e in run.events if e.get("type") != "host-speed"]
    if eager_op_us is not None:
        end = next(i for i, e in enumerate(events) if e.get("type") == "plan-end")
        event = {"type": "host-speed", "t": events[end]["t"], "eager_op_us": eager_op_us, "counts": [64, 256]}
        events = [*events[:end], event, *events[end:]]
    return dataclasses.replace(run, events=events)


def test_the_prediction_scales_the_profiles_launch_costs_to_the_hosts_speed():
    """On the H200 the host's speed differed from process to process (6.7-11.6 µs per eager op
    in one hour's runs) and a cached profile predicts for all of them. The launch costs in
    the estimate (the graph launch, the input copies, the RNG fills) scale by this run's
    speed over the profile's; the GPU-side per-node costs do not. Across the recorded runs
    the tests above check the result against the replay the H200 measured."""
    from launchprof.run.evidence import parse_events
    from launchprof.hazards.inputs import reallocated_arguments

    run = load("two_streams_ok")
    profile = stored_profile(run.profile)
    then = profile.eager_op_us.median
    none = analyse(_with_host_speed(run, None), profile)
    same = analyse(_with_host_speed(run, then), profile)
    assert same.prediction.replay_step_us == pytest.approx(none.prediction.replay_step_us)  # identity at the profile's speed
    assert not any("than when the device profile was measured" in n for n in same.notes)
    slow = analyse(_with_host_speed(run, then * 1.4), profile)
    launches = len(reallocated_arguments(parse_events(run.events)))
    added = slow.prediction.replay_step_us - same.prediction.replay_step_us
    assert added == pytest.approx(0.4 * (profile.graph_launch_fixed_us.median + launches * then))
    assert "scaled by 1.40" in slow.prediction.basis and "scaled by" not in none.prediction.basis
    note = next(n for n in slow.notes if "than when the device profile was measured" in n)
    assert "ran slower" in note and f"{then:.1f} µs in the profile" in note and "by 1.40" in note
    fast = analyse(_with_host_speed(run, then / 1.4), profile)
    assert fast.prediction.median > same.prediction.median > slow.prediction.median
    assert any("ran faster" in n for n in fast.notes)
