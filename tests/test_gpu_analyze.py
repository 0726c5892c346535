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


def analyze(tmp_path: Path, sample: str) -> tuple[int, dict]:
    out = tmp_path / f"{sample}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / f"{sample}.py"), "--target", "step", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.exists(), proc.stderr
    return proc.returncode, json.loads(out.read_text())


def test_decode_graphs_help(tmp_path):
    rc, report = analyze(tmp_path, "decode_loop")
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


def test_hidden_sync_lines(tmp_path):
    rc, report = analyze(tmp_path, "hidden_sync")
    assert rc == 0, "after the failed capture the script carries on (torch.randn works again)"
    assert report["verdict"] == "not-capturable"
    lines = {(Path(h["file"]).name, h["line"]) for h in report["hazards"] if h["kind"] == "hidden-sync"}
    assert {("hidden_sync.py", 15), ("hidden_sync.py", 16), ("hidden_sync.py", 19), ("hidden_sync.py", 20), ("_helpers.py", 10)} <= lines
