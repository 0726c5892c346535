"""The speedup's interval holds across processes (issue 34, item 4): it carries the host's
speed in another process, not only this process's samples.

Checked on every H200 recording of a sample in more than one process (tests/data/runs,
predict, compile_runs, compile_rounds: 12 samples, 2-5 processes each, several sessions and
device profiles), and on synthetic steps whose split and host spread are known.
"""

from __future__ import annotations

from launchprof.analysis.timing import DEVICE_SPREAD

import dataclasses
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from launchprof.analysis import analyse
from launchprof.analysis.host_range import DEFAULT_FACTOR, eager_paced, host_factor, host_variation
from launchprof.analysis.load import stored_profile
from launchprof.analysis.timing import BURST, StepSamples, speedup
from launchprof.analysis.verdict import RunFacts, decide
from launchprof.model.stats import HostPaced, burst_ratio_interval, host_factor_range, speedup_of
from launchprof.model.step_timing import EagerProfile, Stats, Validation
from launchprof.run import load_run
from launchprof.run.evidence import Evidence, parse_events
from tests.recorded import RUNS, recorded

DATA = Path(__file__).parent / "data"
SETS = ("runs", "predict", "compile_runs", "compile_rounds")


def _with_profile(path: Path):
    run = load_run(path)
    return analyse(run, stored_profile(run.profile)), run


def _processes() -> dict[str, list[Path]]:
    """Sample -> its recordings in separate processes (only samples recorded more than once)."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for folder in SETS:
        for path in sorted((DATA / folder).glob("*.lprun")):
            groups[path.name.split(".")[0]].append(path)
    return {name: paths for name, paths in sorted(groups.items()) if len(paths) >= 2}


PROCESSES = _processes()


def _misses(reports: list, low: str, high: str) -> list[str]:
    out = []
    for i, a in enumerate(reports):
        for j, b in enumerate(reports):
            s = b.speedup
            if i != j and not getattr(s, low) <= a.speedup.median <= getattr(s, high):
                out.append(f"run {i}'s {a.speedup.median:.2f} outside run {j}'s {getattr(s, low):.2f}-{getattr(s, high):.2f}")
    return out


def test_the_reruns_span_enough_samples_and_processes():
    assert len(PROCESSES) >= 12 and sum(len(p) * (len(p) - 1) for p in PROCESSES.values()) >= 90


@pytest.mark.parametrize("name", sorted(PROCESSES))
def test_every_recorded_rerun_lies_inside_the_other_runs_intervals(name):
    """On the H200 recordings (100 ordered pairs of processes, 12 samples): with the host's
    speed carried, no run's median falls outside another run's interval; with each process's
    samples alone (the interval reports gave before), 48 of the 100 did."""
    reports = [r for r in (_with_profile(p)[0] for p in PROCESSES[name]) if r.speedup is not None]
    assert len(reports) >= 2
    assert _misses(reports, "low", "high") == []


def test_the_within_process_intervals_alone_miss_reruns():
    reports = [_with_profile(p)[0] for p in PROCESSES["two_streams_ok"]]
    assert len(_misses(reports, "within_low", "within_high")) >= len(reports)


def _recorded(name: str):
    return _with_profile(RUNS / f"{name}.lprun")


@pytest.mark.parametrize("name", recorded(["decode_loop", "hf_gpt2_step", "two_streams_ok"]))
def test_host_paced_steps_get_wide_intervals(name):
    r, _ = _recorded(name)
    v = r.speedup.between_process
    assert v.eager_host_us == pytest.approx(r.eager.step_us.median)  # the GPU idles: the host paces all of it
    assert v.factor == DEFAULT_FACTOR and v.basis == "default"
    assert v.low_factor < 0.7 and v.high_factor > 1.4
    assert r.speedup.high / r.speedup.low > 2.5
    assert (r.speedup.within_high / r.speedup.within_low) < 1.2  # this process alone pinned it to a few percent


def test_the_gpu_paced_step_keeps_a_narrow_interval():
    """long_kernels: the GPU is busy 99.4% of the eager step, so the host's speed barely
    moves it; its interval is the per-burst spread of one process."""
    r, _ = _recorded("long_kernels")
    v = r.speedup.between_process
    assert v.eager_gpu_us > r.eager.step_us.median and v.eager_host_us < 0.05 * r.eager.step_us.median
    assert 0.99 < v.low_factor <= 1.0 <= v.high_factor < 1.01
    assert r.speedup.high / r.speedup.low < 1.2
    assert r.speedup.low == pytest.approx(r.speedup.within_low * v.low_factor)


@pytest.mark.parametrize("name", recorded(["decode_loop", "long_kernels", "dict_inputs", "frozen_scalar", "side_effects"]))
def test_the_median_stays_this_runs_measurement(name):
    r, run = _recorded(name)
    ev = parse_events(run.events)
    pooled = speedup_of(ev.burst_wall_us["eager"], ev.burst_wall_us["replay"])
    assert r.speedup.median == pooled.median == pytest.approx(r.eager.step_us.median / r.replay.step_us.median, rel=1e-12)
    assert r.speedup.within_low <= pooled.low and r.speedup.within_high >= pooled.high
    v = r.speedup.between_process
    # The host's factor, and at least the device's own spread between processes (DEVICE_SPREAD).
    low = min(r.speedup.within_low * v.low_factor, r.speedup.median / DEVICE_SPREAD)
    high = max(r.speedup.within_high * v.high_factor, r.speedup.median * DEVICE_SPREAD)
    assert r.speedup.low == pytest.approx(low) and r.speedup.high == pytest.approx(high)


def test_the_method_says_how_the_interval_was_built():
    r, _ = _recorded("decode_loop")
    v = r.speedup.between_process
    method = r.speedup.method
    assert method.startswith("ratio of the eager and replay step medians (interleaved bursts); 95% interval of this process's samples and bursts")
    assert f"widened {v.low_factor:.2f}–{v.high_factor:.2f}× for another process's host, up to 2.20× faster or slower" in method
    assert "(the default: a host-paced step's measured spread between processes on an H200)" in method


def test_without_a_profile_the_replay_host_part_comes_from_the_runs_own_loop():
    """No profile: the graph launch is taken as 1.3 of this run's eager ops (7.0 µs here);
    without that loop too, the replay's host part is unknown and taken as none, the widest."""
    run = load_run(RUNS / "two_streams_ok.lprun")
    ev = parse_events(run.events)
    bare, with_profile = analyse(run, None), _recorded("two_streams_ok")[0]
    v = bare.speedup.between_process
    assert v.replay_host_low_us == pytest.approx(1.3 * ev.host_eager_op_us / 2)
    assert bare.speedup.median == with_profile.speedup.median
    blind = host_variation(dataclasses.replace(ev, host_eager_op_us=None, host_op_slopes=[]), bare.eager, bare.replay.step_us.median, None)
    assert blind.replay_host_us is None and blind.basis == "default"
    assert blind.low_factor < v.low_factor and blind.high_factor > v.high_factor
    assert blind.low_factor == pytest.approx(1 / DEFAULT_FACTOR)  # all host-paced eager against a still replay


# --- synthetic steps whose split and host spread are known ----------------------------------------


def test_an_all_host_step_against_a_still_replay_moves_by_the_whole_factor():
    paced = HostPaced(eager_us=100.0, eager_host_us=100.0, eager_gpu_us=0.0, replay_us=20.0, replay_host_us=0.0)
    low, high = host_factor_range(paced, 1.5)
    assert low == pytest.approx(1 / 1.5) and high == pytest.approx(1.5)


def test_a_gpu_paced_step_does_not_move_until_the_host_falls_behind():
    paced = HostPaced(eager_us=400.0, eager_host_us=100.0, eager_gpu_us=400.0, replay_us=390.0, replay_host_us=0.0)
    assert host_factor_range(paced, 2.2) == (1.0, 1.0)
    low, high = host_factor_range(paced, 5.0)  # a host 5x slower issues the step in 500 µs: it paces now
    assert low == 1.0 and high == pytest.approx(500 / 400)


def test_a_host_paced_step_floors_at_its_gpu_time():
    """A faster host cannot take the eager step below its kernels' busy time; faster still,
    only the replay gains, so the lowest speedup is where the GPU takes over the pace."""
    paced = HostPaced(eager_us=520.0, eager_host_us=520.0, eager_gpu_us=430.0, replay_us=437.0, replay_host_us=10.0)
    low, _ = host_factor_range(paced, 2.2)
    k = 430 / 520
    assert low == pytest.approx(k / ((437.0 - (1 - k) * 10.0) / 437.0))
    assert low < (430 / 520) / ((437.0 - (1 - 1 / 2.2) * 10.0) / 437.0)  # below the grid's end


def _profile(**changes):
    profile = stored_profile(load_run(RUNS / "decode_loop.lprun").profile)
    return dataclasses.replace(profile, **changes)


@pytest.mark.parametrize(
    ("ops", "slopes", "spread", "factor", "basis"),
    [
        (None, [], None, DEFAULT_FACTOR, "default"),
        (8.34 * 2.4, [], None, 2.4, "run-vs-profile"),  # this process ran 2.4x slower than the profile's
        (8.34 / 2.3, [], None, 2.3, "run-vs-profile"),  # or 2.3x faster
        (8.34, [], 1.6, 2.6, "profile-rounds"),  # the profile's rounds moved by 160%
        (8.34, [5.0, 7.0, 14.0], 0.1, 2.8, "run-samples"),  # this run's own host samples 2.8x apart
    ],
)
def test_the_factor_is_the_default_or_what_was_measured_beyond_it(ops, slopes, spread, factor, basis):
    profile = _profile(spread={"eager_op_us": spread} if spread is not None else {})
    profile = dataclasses.replace(profile, eager_op_us=dataclasses.replace(profile.eager_op_us, median=8.34))
    found = host_factor(Evidence(host_eager_op_us=ops, host_op_slopes=slopes), profile)
    assert found.factor == pytest.approx(factor) and found.basis == basis


def _samples(median: float, n: int = 60, bursts: int = 6, seed: int = 0) -> StepSamples:
    rng = np.random.default_rng(seed)
    values = list(median * (1 + rng.normal(0, 0.01, n)))
    per = n // bursts
    medians = [float(np.median(values[i * per:(i + 1) * per])) for i in range(bursts)]
    return StepSamples(values, [], BURST, [], medians)


def _matmul_tanh(eager_us: float, idle: float) -> tuple:
    """8 small matmuls each followed by a tanh: 430 µs of kernels, 16 launches."""
    eager = EagerProfile(
        step_us=Stats(eager_us, eager_us * 0.99, eager_us * 1.01, 60), kernels_per_step=16, gpu_busy_us=430.0,
        gpu_idle_fraction=idle, launch_api_us=60.0, launch_gap_us=None, timing=BURST,
    )
    return eager, _profile()


@pytest.mark.parametrize(("eager_us", "idle"), [(454.0, 0.03), (520.0, 0.17)])
def test_a_gpu_bound_step_gets_the_same_verdict_on_either_machine(eager_us, idle):
    """By hand: eager 454 µs, replay 435 µs, 1.04x. One machine read 1.19x (its host slower:
    eager 520 µs, the GPU idle 17%), where this process's samples alone clear 1.1x. With the
    host's speed carried, a faster host would take it back to its kernels' 430 µs: below 1.1x
    on both, so neither says graphs-help."""
    eager, profile = _matmul_tanh(eager_us, idle)
    replay_us = 437.0
    variation = host_variation(Evidence(), eager, replay_us, profile)
    sp = speedup(_samples(eager_us), _samples(replay_us, seed=1), variation)
    assert sp.median == pytest.approx(eager_us / replay_us, rel=0.01)
    assert sp.low < 1.1
    if eager_us > 500:
        assert sp.within_low > 1.1  # the old interval: graphs-help on this machine
    facts = RunFacts(True, True, Validation(3, 3, 0.0), sp)
    assert decide(facts) == "marginal"


def test_the_gpu_bound_split_uses_the_launch_calls_as_its_host_part():
    eager, _ = _matmul_tanh(454.0, 0.03)
    host, gpu = eager_paced(eager, 454.0)
    assert (host, gpu) == (60.0, 430.0)  # E - busy (24 µs) is below the launch calls' own 60 µs
    eager, _ = _matmul_tanh(520.0, 0.17)
    assert eager_paced(eager, 520.0) == (520.0, 430.0)


def test_burst_ratios_widen_the_within_process_interval_only_when_they_spread():
    still = burst_ratio_interval([100.0] * 6, [50.0] * 6, 2.0)
    assert (still.low, still.high) == (2.0, 2.0)
    ratios = [0.88, 1.01, 0.99, 0.97, 1.05, 1.0]  # long_kernels' six bursts on the H200
    spread = burst_ratio_interval([r * 3200 for r in ratios], [3200.0] * 6, 0.99)
    logs = np.log(ratios)
    half = 2.571 * np.std(logs, ddof=1) / math.sqrt(6)
    assert spread.low == pytest.approx(math.exp(logs.mean() - half)) and spread.high == pytest.approx(math.exp(logs.mean() + half))
    assert burst_ratio_interval([100.0, 100.0], [50.0, 50.0], 2.0) is None
