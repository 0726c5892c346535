"""analyze stops a long script once its measurement is complete, on a real GPU (skipped
without CUDA): sample_models/long_training.py runs 100,000 steps plainly (minutes on an
H200); under analyze it is stopped at the step after the measurement, its last line never
runs, the stream check still ran, and the report says after how many calls.
``--run-to-end`` lets a shorter run of it finish."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_models" / "long_training.py"


def analyze(tmp_path: Path, *extra: str, script_args: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess, dict, list[dict], float]:
    out, run = tmp_path / "r.json", tmp_path / "r.lprun"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(SAMPLE), "--target", "step", *extra, "--run-out", str(run), "-o", str(out),
         "--", *script_args],
        capture_output=True, text=True, timeout=540, cwd=ROOT,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    assert out.exists() and run.exists(), proc.stderr[-3000:]
    from launchprof.run import load_run

    return proc, json.loads(out.read_text()), load_run(run).events, wall


def test_a_long_training_loop_is_stopped_once_measured(tmp_path):
    proc, report, events, wall = analyze(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    calls = report["run"]["stopped_after_calls"]
    plan_end = next(e for e in events if e["type"] == "plan-end")
    assert calls is not None and calls == plan_end["calls"] < 200, (calls, plan_end)
    said = f"the script was stopped after {calls} calls of the target (`--run-to-end` lets it finish)"
    assert any(said in n for n in report["notes"]), report["notes"]
    assert "final loss" not in proc.stdout + proc.stderr  # the line after the loop never ran
    order = [e["type"] for e in events if e["type"] in ("plan-end", "race-check", "script-end")]
    assert order == ["plan-end", "race-check", "script-end"]  # the stream check ran at the stop
    assert next(e for e in events if e["type"] == "race-check")["status"] == "ok"
    assert report["replay"] is not None and report["validation"]["matches"] == report["validation"]["calls_compared"] >= 3
    print(f"stopped after {calls} calls in {wall:.1f} s; verdict {report['verdict']}, speedup {report['speedup']}")
    assert wall < 60  # 100,000 steps of about 110 kernels each would take minutes on their own


def test_run_to_end_lets_it_finish(tmp_path):
    proc, report, events, _ = analyze(tmp_path, "--run-to-end", script_args=("--steps", "300"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report["run"]["stopped_after_calls"] is None
    assert "300 steps, final loss" in proc.stdout + proc.stderr
    assert next(e for e in events if e["type"] == "script-end")["status"] == "ok"
