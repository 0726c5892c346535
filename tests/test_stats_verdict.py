from __future__ import annotations

import numpy as np
import pytest

from launchprof.model.stats import speedup_of, stats_of


def test_stats_of():
    s = stats_of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median, s.n) == (3.0, 5) and s.p10 < s.median < s.p90
    assert stats_of([]) is None


def test_speedup_interval_brackets_the_ratio():
    rng = np.random.default_rng(1)
    eager = 100 + rng.normal(0, 3, 40)
    replay = 25 + rng.normal(0, 1, 40)
    s = speedup_of(eager, replay)
    assert s.low < s.median < s.high
    assert 3.5 < s.median < 4.5 and s.high - s.low < 0.5


# --- formulas of the analysis, on recorded H200 runs and on burst-timed events -------------

from launchprof.analysis import build_report  # noqa: E402
from launchprof.run.evidence import parse_events
from tests.recorded import load_evidence, recorded, report_of  # noqa: E402

WORKER = {"returncode": 0, "timed_out": False, "interrupted": False, "wall_s": 1.0}


@pytest.mark.parametrize("name", recorded(["decode_loop", "long_kernels", "dict_inputs", "two_streams_ok"]))
def test_speedup_agrees_with_the_medians_printed_beside_it(name):
    r = report_of(name)
    assert r.speedup is not None and r.eager.step_us and r.replay.step_us
    assert r.speedup.median == pytest.approx(r.eager.step_us.median / r.replay.step_us.median, rel=1e-12)
    assert r.speedup.low <= r.speedup.median <= r.speedup.high
    assert "ratio of the eager and replay step medians (interleaved bursts)" in r.speedup.method
    # The recordings have burst timings: those are reported; the in-loop numbers are kept, labelled.
    assert r.eager.timing == r.replay.timing == "burst"
    assert len(r.eager.samples_us) == r.eager.step_us.n and len(r.replay.samples_us) == r.replay.step_us.n
    assert r.eager.in_loop_step_us is not None and r.replay.in_loop_step_us is not None


@pytest.mark.parametrize("name", recorded(["decode_loop", "two_streams_ok", "dict_inputs"]))
def test_payback_counts_capture_warmup_and_instantiate(name):
    """dict_inputs' replay (copy-in of its dict and list) is slower than its eager step on
    the H200 recording (97 against 86 µs; the host read 7.3 µs per eager op in that process): no payback at all."""
    r = report_of(name)
    rep = r.replay
    assert rep.warmup_us and rep.warmup_us > 0  # the current worker records the warm-up calls
    assert rep.setup_us == pytest.approx(rep.capture_us + rep.warmup_us + rep.instantiate_us)
    saved = r.eager.step_us.median - rep.step_us.median
    if name == "dict_inputs":
        assert saved < 0 and r.breakeven_replays is None
    else:
        assert saved > 0 and r.breakeven_replays == pytest.approx(rep.setup_us / saved)


def _burst_events(**capture) -> list[dict]:
    cap = {"type": "capture", "ok": True, "index": 3, "capture_us": 500.0, "warmup_us": 300.0, "instantiate_us": 200.0,
           "graph_nodes": 10, "node_types": {"kernel": 10}, "pool_bytes": 2 << 20, "workspace_bytes": 32 << 20, **capture}
    return [
        {"type": "target", "name": "step", "file": "/nowhere/s.py", "line": 1},
        {"type": "eager-timing", "wall_us": 400.0, "gpu_us": 390.0, "phase": "eager"},
        {"type": "eager-timing", "wall_us": 420.0, "gpu_us": 400.0, "phase": "eager"},
        cap,
        {"type": "replay-timing", "wall_us": 90.0, "gpu_us": 80.0},
        {"type": "timing", "kind": "eager", "mode": "burst", "burst": 0, "wall_us": [100.0, 102.0, 98.0, 101.0], "gpu_us": [90.0] * 4},
        {"type": "timing", "kind": "replay", "mode": "burst", "burst": 0, "wall_us": [50.0, 51.0, 49.0, 50.0]},
        {"type": "timing", "kind": "eager", "mode": "burst", "burst": 1, "wall_us": [99.0, 100.0]},
        {"type": "timing", "kind": "replay", "mode": "burst", "burst": 1, "wall_us": [50.0, 50.5]},
        {"type": "timing", "kind": "clone", "mode": "burst", "burst": 0, "wall_us": [4.0, 5.0, 6.0]},
        {"type": "timing-end", "kind": "replay", "samples": 6, "seconds": 5.0, "stopped_early": True, "why": "time cap"},
        {"type": "memory", "free_bytes": 1, "total_bytes": 2, "static_bytes": 4096, "clone_bytes": 1024,
         "pool_bytes": 3 << 20, "workspace_bytes": 32 << 20},
        {"type": "validation", "index": 4, "match": True, "max_abs_diff": 0.0},
        {"type": "calibration", "status": "measured", "path": "/cache/p.json", "seconds": 8.2},
        {"type": "plan-end", "reason": "complete"},
        {"type": "script-end", "status": "ok", "calls": 60},
    ]


def test_bursts_are_the_reported_step_and_in_loop_is_kept_labelled():
    r = build_report(parse_events(_burst_events()), "s.py", "step", WORKER, 50)
    assert r.eager.timing == r.replay.timing == "burst"
    assert r.eager.step_us.median == 100.0 and r.eager.step_us.n == 6
    assert r.replay.step_us.median == 50.0
    assert r.eager.in_loop_step_us.median == 410.0 and r.replay.in_loop_step_us.median == 90.0
    assert r.speedup.median == pytest.approx(2.0) and "interleaved bursts" in r.speedup.method
    assert r.replay.clone_us.median == 5.0
    assert r.replay.setup_us == 1000.0 and r.breakeven_replays == pytest.approx(1000.0 / 50.0)
    # Nothing splits this step into host- and GPU-paced parts (no trace, no device profile):
    # it is taken as all host-paced, so another process's host could halve its 2x. This
    # process alone would say graphs-help; a rerun could read as little as 1x.
    assert r.speedup.within_low > 1.1 and r.speedup.low < 1.0 < 2.0 < r.speedup.high
    assert r.speedup.between_process.eager_gpu_us == 0.0 and r.speedup.between_process.replay_host_us is None
    assert r.verdict == "marginal"
    assert any("replay timing stopped early after 6 samples" in n for n in r.notes)
    assert any("a quick one was measured in 8.2 s, and cached on the recording machine at /cache/p.json" in n for n in r.notes)


def test_graph_memory_is_split_from_workspaces_and_launchprofs_own():
    r = build_report(parse_events(_burst_events()), "s.py", "step", WORKER, 50)
    assert r.replay.pool_bytes == 3 << 20  # the memory event's final figure, the graph's own
    assert r.replay.workspace_bytes == 32 << 20
    assert r.replay.launchprof_bytes == 4096 + 1024
    no_memory = [e for e in _burst_events() if e["type"] != "memory"]
    r2 = build_report(parse_events(no_memory), "s.py", "step", WORKER, 50)
    assert (r2.replay.pool_bytes, r2.replay.workspace_bytes, r2.replay.launchprof_bytes) == (2 << 20, 32 << 20, None)


def test_script_that_fails_before_capture_gets_script_failed():
    events = [e for e in _burst_events() if e["type"] in ("target", "eager-timing")]
    events.append({"type": "script-end", "status": "exception", "exception": {"type": "ValueError", "message": "boom"}, "calls": 2})
    r = build_report(parse_events(events), "s.py", "step", {**WORKER, "returncode": 1}, 50)
    assert r.verdict == "script-failed" and "ValueError" in r.run.cause
    crashed = [e for e in _burst_events() if e["type"] in ("target", "eager-timing")]
    assert build_report(parse_events(crashed), "s.py", "step", {**WORKER, "returncode": -11}, 50).verdict == "script-failed"


def test_moved_arguments_are_the_workers_observation():
    """One definition of a reallocated input: the worker's ``moved_args``, not the pointers."""
    from launchprof.hazards.inputs import reallocated_arguments

    events = _burst_events(moved_args=["x"])
    events.insert(1, {"type": "call", "index": 0, "args": [{"path": "x", "kind": "tensor", "ptr": 1, "bytes": 64},
                                                           {"path": "y", "kind": "tensor", "ptr": 5, "bytes": 8}]})
    events.insert(2, {"type": "call", "index": 1, "args": [{"path": "x", "kind": "tensor", "ptr": 1, "bytes": 64},
                                                           {"path": "y", "kind": "tensor", "ptr": 6, "bytes": 8}]})
    # y's pointer moved in the recorded calls but the worker did not report it: not moved.
    assert reallocated_arguments(parse_events(events)) == {"x": 64}


@pytest.mark.parametrize(
    ("name", "moved"),
    [("decode_loop", ["tokens"]), ("dict_inputs", ["batch['features']", "extras[0]", "extras[1]", "extras[2]"]), ("two_streams_ok", ["x"])],
)
def test_moved_arguments_are_named_and_sized_as_the_caller_passed_them(name, moved):
    """The worker reports moved arguments by canonical path (``[0]``, ``[1][2]``); the report
    names them as the call did and sizes them: together, launchprof's own static copies."""
    from launchprof.hazards.inputs import reallocated_arguments
    from tests.recorded import load_evidence

    ev = load_evidence(recorded([name])[0])
    assert all(p.startswith("[") for p in ev.capture.moved_args)
    sizes = reallocated_arguments(ev)
    assert sorted(sizes) == sorted(moved) and all(sizes.values())
    assert sum(sizes.values()) == ev.memory.static_bytes
    [h] = [h for h in report_of(name).hazards if h.kind == "reallocated-input"]
    assert h.severity == "info" and h.details["arguments"] == sorted(moved)
    assert h.message.startswith(", ".join(f"`{m}`" for m in sorted(moved)))
    assert f"({sum(sizes.values()):,} bytes)" in h.message


def test_mismatch_hazard_and_validation_row_give_the_same_max_diff():
    r = report_of("frozen_scalar")
    [h] = [h for h in r.hazards if h.kind == "replay-mismatch"]
    assert f"max |diff| {r.validation.max_abs_diff:.3g}" in h.message


def test_not_capturable_run_still_gets_a_prediction():
    from launchprof.crossover.profile import load_profile
    from tests.recorded import DATA

    profile = load_profile(DATA / "profile.json").profile
    r = report_of("hidden_sync", profile)
    assert r.verdict == "not-capturable"
    assert r.prediction is not None and r.predicted_speedup == r.prediction.median > 0
    assert r.prediction.basis and "device profile" in r.prediction.basis
    assert report_of("hidden_sync").prediction is None  # no profile, no made-up number


def test_report_profile_recomputes_the_prediction(tmp_path):
    import json as _json

    from typer.testing import CliRunner

    from launchprof.cli import app
    from tests.recorded import DATA, RUNS

    out = tmp_path / "r.json"
    args = ["report", str(RUNS / "decode_loop.lprun"), "-f", "json", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--profile", str(DATA / "profile.json")])
    assert result.exit_code == 0, result.output
    assert _json.loads(out.read_text())["prediction"]["median"] > 1


def test_notes_name_extra_nodes_and_memory_held_for_no_gain():
    from launchprof.analysis.notes import extra_nodes, memory_for_no_gain
    from launchprof.render.words.notes_text import note_text
    from launchprof.model.step_timing import EagerProfile, ReplayProfile, Speedup

    eager = EagerProfile(None, 4, None, None, None)
    replay = ReplayProfile(None, 7, None, 3 << 20, node_types={"kernel": 5, "memset": 2})
    assert note_text(extra_nodes(eager, replay)) == (
        "the graph has 7 nodes for 4 eager kernels; the others: 1 kernel (not in the eager trace), 2 memset"
    )
    assert note_text(memory_for_no_gain(replay, Speedup(1.02, 0.97, 1.08))) == (
        "replay is not measurably faster, yet the graph holds 3.0 MiB of GPU memory in its pool"
    )
    assert memory_for_no_gain(replay, Speedup(2.0, 1.9, 2.1)) is None


def test_speedup_never_mixes_burst_and_in_loop_timings():
    events = [e for e in _burst_events() if not (e["type"] == "timing" and e["kind"] == "replay")]
    events = [e for e in events if not (e["type"] == "eager-timing")]
    r = build_report(parse_events(events), "s.py", "step", WORKER, 50)
    assert r.eager.timing == "burst" and r.replay.timing == "in-loop"
    assert r.speedup is None and r.breakeven_replays is None


@pytest.mark.parametrize("name", recorded(["unjoined_stream", "hidden_sync", "pageable_copy"]))
def test_a_failed_capture_reports_the_eager_bursts(name):
    """No replay to keep the same method with: the eager step is the bursts, not the loop."""
    ev = load_evidence(name)
    report = report_of(name)
    assert report.replay is None and ev.burst_wall_us.get("eager")
    assert report.eager.timing == "burst" and report.eager.step_us.n == len(ev.burst_wall_us["eager"])


@pytest.mark.parametrize("name", recorded(["decode_loop", "dict_inputs", "side_effects", "data_dependent", "frozen_scalar"]))
def test_the_speedup_interval_is_scipys_percentile_bootstrap(name):
    """launchprof's numpy bootstrap against scipy.stats.bootstrap (percentile, unpaired, the
    same resample count) on the same recorded H200 samples: the draws differ, so the ends
    agree to within the resampling noise, not exactly. That noise grows with the interval's
    width (data_dependent's four argument sets give 2.0-3.6x), so the ends are held to 2%
    of the median plus 10% of the width; scipy's draws are seeded, so the test is the same
    every run (unseeded, a 2%-only bound failed about 7% of runs on data_dependent)."""
    import inspect

    import numpy as np
    from scipy.stats import bootstrap

    r = report_of(name)
    eager, replay = np.asarray(r.eager.samples_us), np.asarray(r.replay.samples_us)
    ours = speedup_of(eager, replay)
    seed = {"rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state": np.random.default_rng(11)}
    ref = bootstrap((eager, replay), lambda a, b, axis=-1: np.median(a, axis=axis) / np.median(b, axis=axis), paired=False,
                    vectorized=True, n_resamples=2000, confidence_level=0.95, method="percentile", **seed).confidence_interval
    tolerance = 0.02 * ours.median + 0.10 * (ref.high - ref.low)
    assert abs(ours.low - ref.low) <= tolerance and abs(ours.high - ref.high) <= tolerance, (ours, ref, tolerance)
    assert ours.low <= ours.median <= ours.high


def test_a_wide_interval_is_scipys_too():
    """Few, noisy samples (a 90% interval here is 10-20% narrower than the 95% one), so the
    check above cannot pass with the wrong coverage."""
    import numpy as np
    from scipy.stats import bootstrap

    rng = np.random.default_rng(7)
    eager, replay = rng.lognormal(np.log(100), 0.5, 15), rng.lognormal(np.log(40), 0.5, 15)
    ours = speedup_of(eager, replay)
    ref = bootstrap((eager, replay), lambda a, b, axis=-1: np.median(a, axis=axis) / np.median(b, axis=axis), paired=False,
                    vectorized=True, n_resamples=2000, confidence_level=0.95, method="percentile").confidence_interval
    assert ours.low == pytest.approx(ref.low, rel=0.05) and ours.high == pytest.approx(ref.high, rel=0.05), (ours, ref)
