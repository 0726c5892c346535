"""No false findings on a real GPU (skipped without CUDA): an ``nn.Module`` target under
``torch.inference_mode()`` that only reads its input is not said to change it, a real
in-place write under inference mode still is, and a decorated target's findings are never
at its decorator line. Each test analyzes a small script written to a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

MODULES = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64))

    def forward(self, x):
        return self.body(x) * 2.0


model = Net().cuda().eval()
with torch.inference_mode():
    for _ in range(300):
        x = torch.randn(32, 64, device="cuda")
        y = model(x)
print(float(y.sum()))
'''

WRITES = '''
import torch


def step(x, w):
    x.mul_(2.0)
    return x @ w


w = torch.randn(64, 64, device="cuda")
with torch.inference_mode():
    for _ in range(300):
        x = torch.randn(32, 64, device="cuda")
        y = step(x, w)
print(float(y.sum()))
'''

DECORATED = '''
import torch

count = torch.zeros((), device="cuda")


@torch.no_grad()
def step(x):
    global count
    count = count + 1.0
    return x * count


x = torch.randn(1024, device="cuda")
for _ in range(300):
    y = step(x)
print(float(y.sum()))
'''


def analyze(tmp_path: Path, source: str, target: str) -> tuple[dict, list[str]]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(script), "--target", target, "--no-calibrate", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), script.read_text().splitlines()


def _mutations(report: dict) -> list[dict]:
    return [h for h in report["hazards"] if h.get("code") == "mutated-argument"]


def test_a_module_under_inference_mode_is_not_said_to_change_its_input(tmp_path):
    report, lines = analyze(tmp_path, MODULES, "model")
    assert _mutations(report) == [], report["hazards"]
    for h in report["hazards"]:  # and no fix rewrites a definition
        assert not (h.get("fix") or {}).get("after") or not lines[h["fix"]["line"] - 1].lstrip().startswith(("def ", "@")), h


def test_a_real_write_under_inference_mode_is_found_at_its_line(tmp_path):
    report, lines = analyze(tmp_path, WRITES, "step")
    found = _mutations(report)
    assert len(found) == 1, report["hazards"]
    assert lines[found[0]["line"] - 1].strip() == "x.mul_(2.0)"


def test_a_decorated_targets_findings_are_never_at_its_decorator(tmp_path):
    report, lines = analyze(tmp_path, DECORATED, "step")
    assert report["hazards"], "the rebound `count` is a finding"
    for h in report["hazards"]:
        if h.get("line") and h.get("file", "").endswith("script.py"):
            assert not lines[h["line"] - 1].lstrip().startswith("@"), h
        fix = h.get("fix") or {}
        if fix.get("after") and fix.get("line"):
            assert not lines[fix["line"] - 1].lstrip().startswith(("def ", "@")), h
