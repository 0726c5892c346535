"""Training steps on a real GPU (skipped without CUDA): issue 33's two training cases.

1. A whole step (MLP, cross-entropy, backward, AdamW(capturable=True)) whose loop keeps
   ``loss``: capture fails on the kept autograd graph, launchprof detaches it for the
   measurement, captures, and reports not-capturable (as written) with every figure labelled
   "once fixed";
   the script prints what ``python SCRIPT`` prints.
2. An fp16 AMP step with GradScaler: the whole step does not capture; the report carries the
   step with its model's forward and backward graphed (``partial_capture``), whose step times
   agree with the script's own plain loop, in the same process, within ``TOLERANCE``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "gpu_scripts"
# The report's step medians against the script's plain loop timing the same step in the same
# process (the partial capture's bursts and the loop both synchronise around each call).
TOLERANCE = 0.25


def analyze(tmp_path: Path, script: str, env: dict | None = None) -> tuple[dict, str, subprocess.CompletedProcess]:
    out, text = tmp_path / f"{script}.json", tmp_path / f"{script}.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(SCRIPTS / f"{script}.py"), "--target", "step", "--run-to-end",
         "-f", "json", "-o", str(out), "-f", "text", "-o", str(text)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert out.exists(), proc.stderr[-3000:]
    return json.loads(out.read_text()), text.read_text(), proc


def plain(script: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(SCRIPTS / f"{script}.py")], capture_output=True, text=True, timeout=300, cwd=SCRIPTS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_a_kept_loss_is_released_captured_and_labelled(tmp_path):
    report, text, proc = analyze(tmp_path, "train_keeps_loss")
    assert proc.returncode == 0, proc.stderr[-3000:]
    kept = [h for h in report["hazards"] if h["kind"] == "kept-autograd-graph"]
    assert kept and kept[0]["severity"] == "error", report["hazards"]
    assert report["replay"] is not None and report["speedup"]["low"] > 1.0  # captured after the release
    # not-capturable as written (measured once fixed), unless the known AdamW limit (README
    # "Training steps": a capturable AdamW step may read replay-mismatch, max |diff| ~4e-4)
    # failed validation: then replay-invalid. Never graphs-help over the kept graph's error.
    mismatch = any(h["kind"] == "replay-mismatch" for h in report["hazards"])
    invalid = mismatch and report["validation"]["matches"] < report["validation"]["calls_compared"] and report["verdict"] == "replay-invalid"
    assert report["verdict"] == "not-capturable" or invalid, (report["verdict"], report["hazards"])
    [fix] = report["assumes_fix"]
    assert [v["name"] for v in fix["variables"]] == ["loss"] and {"replay", "speedup"} <= set(fix["figures"])
    src = (SCRIPTS / "train_keeps_loss.py").read_text().splitlines()
    assert src[fix["variables"][0]["line"] - 1].strip().startswith("loss = step(x, y)")
    assert fix["variables"][0]["grad_fn"] == "NllLossBackward0"
    flat = " ".join(text.split())
    assert flat.count("(once fixed: loss released)") >= 3 and "launchprof detached `loss`" in flat
    # The script's own output, as `python SCRIPT` prints it: the detached loss keeps its value,
    # and launchprof's extra calls leave the training where it was (a replay of AdamW's
    # kernels matches eager exactly: /work/tools/gpu-field finding 5).
    want = plain("train_keeps_loss").stdout.splitlines()
    got = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith(("steps ", "final loss "))]
    assert got == want, (got, want)
    print("kept loss:", report["speedup"], fix)


def test_a_grad_scaler_step_gets_its_partial_capture_figure(tmp_path):
    direct = tmp_path / "direct.json"
    report, text, proc = analyze(tmp_path, "amp_scaler_step", {"LAUNCHPROF_DIRECT_OUT": str(direct)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report["verdict"] == "not-capturable" and report["replay"] is None
    p = report["partial_capture"]
    assert p is not None and p["status"] == "measured", p
    assert p["module"] == "model" and p["module_type"] == "Sequential" and p["autocast"] == "float16"
    assert p["args"] == [{"expr": "x", "shape": [64, 512], "dtype": "float32", "requires_grad": False}]
    assert "model = torch.cuda.make_graphed_callables(model, (sample_x,))" in p["snippet"]
    measured = json.loads(direct.read_text())
    for ours, theirs in ((p["eager_step_us"]["median"], measured["eager_us"]), (p["graphed_step_us"]["median"], measured["graphed_us"])):
        assert abs(ours / theirs - 1) < TOLERANCE, (p["eager_step_us"], p["graphed_step_us"], measured)
    ratio = measured["eager_us"] / measured["graphed_us"]
    assert abs(p["speedup"]["median"] / ratio - 1) < TOLERANCE, (p["speedup"], ratio)
    assert "forward and backward graphed" in " ".join(text.split())
    result = re.search(r"^RESULT (.+)$", proc.stdout + proc.stderr, re.M)
    assert result and float(result.group(1)) == pytest.approx(float(plain("amp_scaler_step").stdout.split()[-1]), rel=1e-2)
    print("partial capture:", p["speedup"], "matches:", p["matches"], "direct:", measured)
