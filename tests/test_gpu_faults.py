"""Hardening on a real GPU: user code crashes, hangs or misbehaves; launchprof still reports
what it measured, names the cause in one line, exits with the documented code, in bounded
time, leaving no process behind."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "gpu_scripts"


def analyze(tmp_path: Path, script: str, *args: str, target: str | None = "step", extra: tuple[str, ...] = ()) -> tuple[int, dict | None, str, float]:
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "launchprof", "analyze", str(SCRIPTS / script), "-o", str(out), *extra]
    if target:
        cmd += ["--target", target]
    cmd += ["--", *args]
    t0 = time.perf_counter()
    env = {**os.environ, "LAUNCHPROF_TEST_TAG": TAG + script + "-".join(args)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=HERE.parent, env=env)
    wall = time.perf_counter() - t0
    report = json.loads(out.read_text()) if out.exists() else None
    record(script, args, proc.returncode, report, wall)
    return proc.returncode, report, proc.stderr, wall


# scripts/gpu-check collects the scenarios' outcomes here; without it nothing is written (a
# fixed name in the shared temp folder would be left behind and shared between users).
RESULTS = Path(os.environ["LAUNCHPROF_FAULTS_LOG"]) if os.environ.get("LAUNCHPROF_FAULTS_LOG") else None
TAG = uuid.uuid4().hex


def record(script: str, args: tuple, rc: int, report: dict | None, wall: float) -> None:
    if RESULTS is None:
        return
    cause = (report or {}).get("run", {}) or {}
    with RESULTS.open("a") as fh:
        fh.write(json.dumps({"scenario": f"{script} {' '.join(args)}", "rc": rc, "wall_s": round(wall, 1), "verdict": (report or {}).get("verdict"), "cause": cause.get("cause")}) + "\n")


def no_workers_left() -> bool:
    """No process started for this test (tagged through its environment) is still alive."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if TAG.encode() in (proc / "environ").read_bytes():
                return False
        except OSError:
            continue
    return True


@pytest.mark.parametrize("k", [5, 20, 40, 60])  # warm-up, eager timing, around capture, replay
def test_script_raises_at_call_k(tmp_path, k):
    rc, report, err, wall = analyze(tmp_path, "faults.py", "raise", str(k), extra=("--run-to-end",))  # 60: after the plan
    assert rc == 3 and report is not None
    assert "ValueError" in report["run"]["cause"] and f"bad batch at call {k}" in report["run"]["cause"]
    assert "Traceback" not in err
    if k >= 20:
        assert report["eager"]["step_us"]["n"] > 0  # what was measured before is kept
    assert no_workers_left()


def test_sys_exit(tmp_path):
    rc, report, _, _ = analyze(tmp_path, "faults.py", "exit", "30")
    assert rc == 3 and "status 5" in report["run"]["cause"]


@pytest.mark.parametrize("mode", ["abort", "segfault"])
def test_worker_killed_by_signal(tmp_path, mode):
    rc, report, _, wall = analyze(tmp_path, "faults.py", mode, "30")
    assert rc == 3 and report is not None
    assert "signal" in report["run"]["cause"]
    assert report["eager"]["step_us"]["n"] > 0
    assert no_workers_left()


def test_sticky_cuda_error(tmp_path):
    """Run it apart from the others (scripts/gpu-check does): a device-side assert in one
    process made scenarios running beside it fail with "unspecified launch failure"."""
    rc, report, _, wall = analyze(tmp_path, "faults.py", "assert", "25")
    assert rc == 3 and report is not None
    assert report["eager"]["step_us"]["n"] > 0
    assert wall < 120
    assert no_workers_left()


def test_out_of_memory(tmp_path):
    rc, report, _, _ = analyze(tmp_path, "faults.py", "oom", "25")
    assert rc == 3 and "OutOfMemoryError" in report["run"]["cause"]


def test_hang_is_stopped_by_timeout(tmp_path):
    rc, report, _, wall = analyze(tmp_path, "faults.py", "hang", "30", extra=("--timeout", "25"))
    assert rc == 3 and "--timeout" in report["run"]["cause"]
    assert wall < 60
    assert no_workers_left()


def test_too_few_calls(tmp_path):
    rc, report, _, _ = analyze(tmp_path, "faults.py", "few", "12")
    assert rc == 0
    assert "called 12 times" in report["run"]["cause"]
    assert report["eager"]["step_us"]["n"] > 0


def test_never_called(tmp_path):
    rc, report, err, _ = analyze(tmp_path, "faults.py", "never")
    assert rc == 2 and "never called" in err


@pytest.mark.parametrize(
    "mode, target",
    [
        ("none", "step_none"),
        ("nested", "step_nested"),
        ("method", "Runner.run"),
        ("module", "model"),
        ("kworder", "step_kw"),
        ("inference", "step_inference"),
    ],
)
def test_target_shapes(tmp_path, mode, target):
    rc, report, err, _ = analyze(tmp_path, "targets.py", mode, target=target)
    assert rc == 0, err
    assert report["verdict"] in ("graphs-help", "marginal", "graphs-dont-help")
    assert report["validation"]["matches"] == report["validation"]["calls_compared"] >= 3


def test_cpu_only_target(tmp_path):
    rc, report, err, _ = analyze(tmp_path, "targets.py", "cpu", target="step_cpu")
    assert rc == 0, err
    assert report["verdict"] == "graphs-dont-help"
    assert any("no CUDA work" in n for n in report["notes"])


def test_non_callable_target(tmp_path):
    rc, _, err, _ = analyze(tmp_path, "targets.py", "cpu", target="MODE")
    assert rc == 2 and "not a function" in err
