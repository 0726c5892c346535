"""Leaving the script working, end to end on a real GPU (skipped without CUDA): a script's
result under ``launchprof analyze`` equals its plain run's, for a transformers StaticCache
decode (issue 33: the script died at its next call with ``index_copy_(): index out of
bounds``) and for AdamW training steps however the step reaches its optimizer (issue 33:
validation read ``replay-mismatch``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "gpu_scripts"


def plain(tmp_path: Path, script: str, *args: str) -> dict:
    out = tmp_path / "plain.json"
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), str(out), *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def analyzed(tmp_path: Path, script: str, target: str, *args: str) -> tuple[dict, dict]:
    out, report = tmp_path / "analyzed.json", tmp_path / "report.json"
    cmd = [sys.executable, "-m", "launchprof", "analyze", str(SCRIPTS / script), "--target", target, "--run-to-end", "-o", str(report), "--", str(out), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert report.exists(), proc.stderr[-3000:]
    assert out.exists(), f"the script did not finish under launchprof: {json.loads(report.read_text()).get('run')}"
    return json.loads(out.read_text()), json.loads(report.read_text())


def test_a_static_cache_decode_ends_as_its_plain_run(tmp_path):
    pytest.importorskip("transformers")
    expected = plain(tmp_path, "static_cache_decode.py")
    got, report = analyzed(tmp_path, "static_cache_decode.py", "decode")
    assert got == expected  # the same tokens, and the cache where the plain run left it
    assert not [n for n in report.get("notes", []) if "could not be put back" in n], report.get("notes")
    print("static cache:", report["verdict"], report.get("speedup"), report.get("validation"))


@pytest.mark.parametrize(
    ("target", "args"),
    [
        ("step", ("--opt", "global")),
        ("step_with", ("--opt", "argument")),
        ("step_helper", ("--opt", "helper")),
        ("step", ("--opt", "global", "--zero", "outside")),
        ("step", ("--opt", "global", "--dtype", "bfloat16")),
        ("step", ("--opt", "sgd")),
    ],
)
def test_an_adamw_step_validates_and_the_script_ends_as_its_plain_run(tmp_path, target, args):
    expected = plain(tmp_path, "adamw_step.py", *args)
    got, report = analyzed(tmp_path, "adamw_step.py", target, *args)
    validation = report["validation"]
    print(target, args, report["verdict"], validation)
    assert validation["calls_compared"] >= 3 and validation["matches"] == validation["calls_compared"], validation
    # Replays and eager calls may round differently; state left changed by 200 extra steps
    # (the bursts) would move the weights far more than this.
    assert got["losses"] == pytest.approx(expected["losses"], rel=1e-3)
    assert got["checksum"] == pytest.approx(expected["checksum"], rel=1e-3, abs=1e-3)
