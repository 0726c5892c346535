"""End-to-end analyze of the two reference samples on a real GPU (skipped without CUDA)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent


def analyze(tmp_path: Path, sample: str, *extra: str) -> tuple[int, dict]:
    """``extra``: more options, e.g. --kernels where a test compares the profiler's figures."""
    out = tmp_path / f"{sample}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / f"{sample}.py"), "--target", "step", "-o", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.exists(), proc.stderr
    return proc.returncode, json.loads(out.read_text())


def test_decode_graphs_help(tmp_path):
    rc, report = analyze(tmp_path, "decode_loop", "--kernels")
    assert rc == 0
    assert report["verdict"] == "graphs-help"
    assert report["speedup"]["low"] > 1.1
    assert report["validation"]["matches"] == report["validation"]["calls_compared"] >= 3
    # Every eager kernel the profiler counted is one node of the graph.
    assert report["eager"]["kernels_per_step"] == report["replay"]["graph_nodes"]
    assert not [h for h in report["hazards"] if h["severity"] in ("error", "warning")]


def test_long_kernels_do_not_help(tmp_path):
    rc, report = analyze(tmp_path, "long_kernels")
    assert rc == 0
    assert report["verdict"] in ("graphs-dont-help", "marginal")
    assert report["eager"]["kernels_per_step"] == 2


def test_the_rng_prologue_is_predicted_where_the_step_draws_random_numbers(tmp_path):
    """The worker says whether a warm-up call advanced the default CUDA generator; where it
    did (dropout), the prediction adds torch's two RNG fills before each replay and the
    replay estimate lands near the measured replay; where not (decode), it adds none. With
    --kernels: the prediction from the profiled per-kernel durations, which this checks."""
    from launchprof.run import load_run

    for sample, draws in (("dropout_train", True), ("decode_loop", False)):
        run_out, out = tmp_path / f"{sample}.lprun", tmp_path / f"{sample}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / f"{sample}.py"), "--target", "step",
             "--run-out", str(run_out), "-o", str(out), "--kernels"],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )
        assert out.exists() and run_out.exists(), proc.stderr
        events = load_run(run_out).events
        mutations = [e for e in events if e.get("type") == "mutations"]
        assert [e.get("cuda_rng") for e in mutations] == [draws], sample
        speed = [e["eager_op_us"] for e in events if e.get("type") == "host-speed"]
        assert len(speed) == 1 and 1.0 < speed[0] < 50.0, speed  # the profile's eager-op loop, sampled between the bursts
        report = json.loads(out.read_text())
        assert ("RNG fills" in report["prediction"]["explanation"]) is draws, report["prediction"]
        if draws:
            estimate, measured = report["prediction"]["replay_step_us"], report["replay"]["step_us"]["median"]
            assert abs(estimate / measured - 1) < 0.2, (estimate, measured)


COUNT_UPDATE_KERNELS = """
import torch
from torch.profiler import ProfilerActivity, profile
param, grad = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
param.add_(grad, alpha=-0.1).norm()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    param.add_(grad, alpha=-0.1).norm()  # frozen_scalar.update's two lines
    torch.cuda.synchronize()
print(sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset"))))
"""


def test_a_decorated_target_keeps_its_eager_kernels(tmp_path):
    """No --target: the overview profiler runs until @launchprof.target's function takes
    over, and the plan profiles that target's calls from the start (CUPTI is paid already:
    worker/profiler_choice.py, "overview"), without --kernels.
    Its eager kernel count must be torch.profiler's own count of one call here (on the
    H200 the plan's trace came back empty when the overview had not torn CUPTI down). The
    count runs in a child process: a profiler session here would leave CUPTI subscribed in
    the test process and slow the in-process timing tests after it."""
    out = tmp_path / "frozen.json"
    proc = subprocess.run([sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / "frozen_scalar.py"), "-o", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.exists(), proc.stderr
    report = json.loads(out.read_text())
    count = subprocess.run([sys.executable, "-c", COUNT_UPDATE_KERNELS], capture_output=True, text=True, timeout=120)
    assert count.returncode == 0, count.stderr
    counted = int(count.stdout.split()[-1])
    assert counted > 0 and report["eager"]["kernels_per_step"] == counted, (report["eager"]["kernels_per_step"], counted, report["notes"])


def test_hidden_sync_lines(tmp_path):
    rc, report = analyze(tmp_path, "hidden_sync")
    assert rc == 0, "after the failed capture the script carries on (torch.randn works again)"
    assert report["verdict"] == "not-capturable"
    lines = {(Path(h["file"]).name, h["line"]) for h in report["hazards"] if h["kind"] == "hidden-sync"}
    assert {("hidden_sync.py", 15), ("hidden_sync.py", 16), ("hidden_sync.py", 19), ("hidden_sync.py", 20), ("_helpers.py", 10)} <= lines


def _median(report: dict, side: str) -> float | None:
    """``SIDE.step_us.median`` read defensively by its contract name."""
    part = report.get(side) or {}
    step = part.get("step_us") or {}
    value = step.get("median") if isinstance(step, dict) else None
    return float(value) if value is not None else None


def test_step_times_match_the_step_timed_directly(tmp_path):
    """Criterion 1 of the timing issue: analyze's eager and replay step medians within 15%
    of the same step timed directly in the same process (back to back, median of 60)."""
    import os

    out, direct = tmp_path / "small.json", tmp_path / "direct.json"
    proc = subprocess.run(
        # --run-to-end: the script times the step directly after its loop
        [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "tests" / "gpu_scripts" / "small_step.py"), "--target", "step", "--run-to-end",
         "-f", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "LAUNCHPROF_DIRECT_OUT": str(direct)},
    )
    assert out.exists() and direct.exists(), proc.stderr
    report, reference = json.loads(out.read_text()), json.loads(direct.read_text())
    eager, replay = _median(report, "eager"), _median(report, "replay")
    assert eager is not None and replay is not None, f"no eager/replay step_us.median in the report: {sorted(report)}"
    assert abs(eager / reference["eager_us"] - 1) <= 0.15, (eager, reference)
    assert abs(replay / reference["replay_us"] - 1) <= 0.15, (replay, reference)


def test_launchprof_leaves_no_process_wide_slowdown(tmp_path):
    """The in-process check above cannot see a slowdown launchprof leaves on the whole
    process (CUPTI still subscribed after its profiler: every later launch pays), since it
    slows the direct loop too. So the script times a plain ``x.add_`` loop and its own step,
    both directly, before its first step (before launchprof profiles anything) and again at
    its end: launchprof must leave each within 15% of the one before, beyond the drift the
    same script shows without launchprof (at most 10% of it forgiven).

    Against a clean process, launchprof's step must lie between the clean step (GPU-bound)
    and the clean step scaled by the two processes' host speeds before their first step
    (host-bound), within 20%: host speed differs between processes (H200, 2026-12-01: 6.7
    to 11.6 µs per eager op). A slowdown present from the process's start, before the first
    loop, scales that ratio too: that part cannot be told from the machine's own spread."""
    import os

    script = ROOT / "tests" / "gpu_scripts" / "small_step.py"
    out, inside, clean = tmp_path / "small.json", tmp_path / "inside.json", tmp_path / "clean.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(script), "--target", "step", "--run-to-end", "-f", "json", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "LAUNCHPROF_DIRECT_OUT": str(inside)},
    )
    assert out.exists() and inside.exists(), proc.stderr
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=script.parent,
                           env={**os.environ, "LAUNCHPROF_DIRECT_OUT": str(clean)})
    assert plain.returncode == 0 and clean.exists(), plain.stderr
    report, after, reference = json.loads(out.read_text()), json.loads(inside.read_text()), json.loads(clean.read_text())
    print("analyzed process", after, "clean process", reference)
    for before, end in (("host_before_us", "host_after_us"), ("eager_before_us", "eager_after_us")):
        # The same script without launchprof drifts too; at most 10% of that is forgiven.
        drift = min(1.10, max(1.0, reference[end] / reference[before]))
        assert after[end] <= 1.15 * drift * after[before], (f"{end} against {before}, launchprof's process", after, "clean", reference)
    host = after["host_before_us"] / reference["host_before_us"]  # before launchprof did anything
    for side, key in (("eager", "eager_us"), ("replay", "replay_us")):
        measured = _median(report, side)
        assert measured is not None
        # A step wholly bound by the host scales with its speed, one bound by the GPU does
        # not: the clean step, scaled by anything from 1 to the host ratio, within 20%.
        low, high = sorted((reference[key], reference[key] * host))
        assert 0.8 * low <= measured <= 1.2 * high, (side, measured, (low, high), after, "clean process", reference)


def _analyzed_run(tmp_path: Path, sample: str, *extra: str) -> tuple[dict, list[dict]]:
    """The report and the run's events of ``analyze --target step`` on a sample."""
    from launchprof.run import load_run

    run_out, out = tmp_path / f"{sample}.lprun", tmp_path / f"{sample}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / f"{sample}.py"), "--target", "step",
         "--run-out", str(run_out), "-o", str(out), *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert out.exists() and run_out.exists(), proc.stderr
    return json.loads(out.read_text()), load_run(run_out).events


def _plans(events: list[dict]) -> list[tuple]:
    return [(e["profiled"], e["reason"], e["when"]) for e in events if e["type"] == "profiler-plan"]


def test_a_step_that_captures_runs_no_profiler_unless_asked(tmp_path):
    """decode_loop without --kernels: op sequences instead of the eager profile, no trace at
    all, and the same verdict; with --kernels both traces, as before."""
    report, events = _analyzed_run(tmp_path, "decode_loop")
    assert _plans(events) == [(False, None, "start")], _plans(events)
    assert not [e for e in events if e["type"] == "trace"]
    ops = [e for e in events if e["type"] == "op-sequence"]
    assert len(ops) == 3 and len({e["digest"] for e in ops}) == 1 and ops[0]["count"] > 0
    # The verdict needs the interval's low end at 1.1x, which GPU tests running side by side
    # can pull down (marginal on the H200 under pytest -n 3); the launch-bound step's median cannot.
    assert report["speedup"]["median"] > 1.5 and report["verdict"] in ("graphs-help", "marginal"), report["speedup"]
    report, events = _analyzed_run(tmp_path, "decode_loop", "--kernels")
    assert _plans(events) == [(True, "kernels", "start")]
    assert sorted(e["what"] for e in events if e["type"] == "trace") == ["eager", "replay"]
    assert not [e for e in events if e["type"] == "op-sequence"]


def test_differing_op_sequences_profile_the_eager_calls_after_the_plan(tmp_path):
    """data_dependent branches on a Python argument: its profile-phase calls run different
    ops, so the recorded eager calls are profiled after the plan and the kernel sequences
    give the hazard as before."""
    report, events = _analyzed_run(tmp_path, "data_dependent")
    assert _plans(events) == [(False, None, "start"), (True, "ops-differ", "after-plan")], _plans(events)
    assert len({e["digest"] for e in events if e["type"] == "op-sequence"}) == 2
    assert [e["what"] for e in events if e["type"] == "trace"] == ["eager"]
    assert any(h["kind"] == "data-dependent-control-flow" for h in report["hazards"]), report["hazards"]


def test_a_failed_capture_profiles_the_eager_calls_after_the_plan(tmp_path):
    report, events = _analyzed_run(tmp_path, "hidden_sync")
    assert report["verdict"] == "not-capturable"
    assert _plans(events) == [(False, None, "start"), (True, "capture-failed", "after-plan")], _plans(events)
    (trace,) = [e for e in events if e["type"] == "trace"]
    assert trace["what"] == "eager" and trace["calls"] >= 1
    assert report["eager"]["kernels_per_step"], report["eager"]  # read from that trace
