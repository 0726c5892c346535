"""On a GPU: the device-side assert of sample_models/device_assert.py.

Without --locate-async the report says where the error surfaced (never the gather line)
and prints the blocking re-run command; with it, the note names the gather line, the
line an independent `CUDA_LAUNCH_BLOCKING=1 python` run of the script blames too."""

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
SAMPLE = ROOT / "sample_models" / "device_assert.py"


def marked(text: str) -> int:
    return next(i for i, line in enumerate(SAMPLE.read_text().splitlines(), 1) if text in line)


def analyze(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(SAMPLE), "-o", str(out), *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)},
    )
    return proc, json.loads(out.read_text())


def test_plain_python_with_blocking_launches_blames_the_gather_line():
    """The independent reference: Python's own traceback under CUDA_LAUNCH_BLOCKING=1."""
    proc = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1"})
    assert proc.returncode != 0
    lines = [int(n) for n in re.findall(rf'File "{re.escape(str(SAMPLE))}", line (\d+)', proc.stderr)]
    assert lines and lines[-1] == marked("launches the faulting kernel")


def test_report_says_where_it_surfaced_and_how_to_find_the_launch(tmp_path):
    proc, report = analyze(tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert report["verdict"] == "script-failed"
    advice = next(n for n in report["notes"] if n.startswith("asynchronous CUDA error"))
    surfaced = int(re.search(r"surfaced at \S+device_assert.py:(\d+)", advice).group(1))
    assert surfaced != marked("launches the faulting kernel")
    assert "CUDA_LAUNCH_BLOCKING=1 python sample_models/device_assert.py" in advice


def test_locate_async_names_the_gather_line(tmp_path):
    proc, report = analyze(tmp_path, "--locate-async")
    assert proc.returncode == 3, proc.stderr
    note = next(n for n in report["notes"] if n.startswith("the faulting kernel was launched at "))
    assert f"device_assert.py:{marked('launches the faulting kernel')}" in note and "twice" in note
    assert not any(n.startswith("asynchronous CUDA error") for n in report["notes"])
