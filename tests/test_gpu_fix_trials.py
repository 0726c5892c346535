"""Written fixes tried on the user's own calls, end to end on a GPU (skipped without CUDA):
``launchprof analyze`` on small scripts whose fixes lie in the target, in a callee of the
target, and in the caller; each fix the report shows as verified captured and matched eager
on the recorded calls, and the script ends as its plain run does (every trial call put back).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent

LOOP = """
torch.manual_seed(0)
w = torch.randn(64, 64, device="cuda") / 8
total = 0.0
for i in range(60):
    x = torch.randn(32, 64, device="cuda")
    total += float(CALL.sum())
with open(sys.argv[1], "w") as fh:
    fh.write(repr(total))
"""

SCRIPTS = {
    "peak": """
def step(x, w):
    h = x @ w
    peak = h.abs().amax()
    m = peak.item()
    return h / max(m, 1e-6)
""",
    "branch": """
def step(x, w):
    h = torch.tanh(x @ w)
    if h.mean() > 0:
        return h * 2.0
    else:
        return h - 1.0
""",
    "callee": """
def scaled(h):
    s = h.abs().mean().item()
    return h * s


def step(x, w):
    h = x @ w
    return scaled(h) + 1.0
""",
    "frozen": """
def step(x, w, lr):
    return (x @ w) * lr
""",
}
CALLS = {"frozen": "step(x, w, 0.1 * (1 + i % 3))"}


def write(tmp_path: Path, name: str) -> Path:
    body = textwrap.dedent(SCRIPTS[name]) + LOOP.replace("CALL", CALLS.get(name, "step(x, w)"))
    path = tmp_path / f"{name}.py"
    path.write_text("import sys\n\nimport torch\n\n" + body, encoding="utf-8")
    return path


def plain(tmp_path: Path, script: Path) -> float:
    out = tmp_path / "plain.txt"
    proc = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return float(out.read_text())


def analyzed(tmp_path: Path, script: Path) -> tuple[float, dict]:
    out, report = tmp_path / "analyzed.txt", tmp_path / "report.json"
    cmd = [sys.executable, "-m", "launchprof", "analyze", str(script), "--target", "step", "-n", "10", "--no-calibrate", "--run-to-end",
           "--hide-output", "-f", "json", "-o", str(report), "--", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert report.exists(), proc.stderr[-3000:]
    assert out.exists(), f"the script did not finish under launchprof: {json.loads(report.read_text()).get('run')}"
    return float(out.read_text()), json.loads(report.read_text())


def fixes_of(report: dict) -> list[dict]:
    return [h["fix"] | {"kind": h["kind"]} for h in report["hazards"] if h.get("fix") and h["fix"].get("after")]


def check_verified(tmp_path: Path, name: str) -> dict:
    script = write(tmp_path, name)
    expected = plain(tmp_path, script)
    got, report = analyzed(tmp_path, script)
    fixes = fixes_of(report)
    print(name, json.dumps([(f["kind"], f["line"], f["after"], f["verified"], f["verification"]) for f in fixes], indent=1))
    assert got == pytest.approx(expected, rel=1e-4)  # the trials' calls were all put back
    verified = [f for f in fixes if f["verified"] is True]
    assert verified, fixes
    for f in verified:
        v = f["verification"]
        assert v["captured"] is True and v["calls_compared"] >= 1 and v["matches"] == v["calls_compared"], v
        assert v["replay_step_us"] > 0 and v["speedup"] > 0 and v["reason_code"] == ""
    return report


def test_a_peak_read_with_item_gets_a_verified_fix(tmp_path):
    report = check_verified(tmp_path, "peak")
    assert {f["kind"] for f in fixes_of(report) if f["verified"]} <= {"hidden-sync", "data-dependent-control-flow"}


def test_a_tensor_branch_becomes_a_verified_torch_where(tmp_path):
    report = check_verified(tmp_path, "branch")
    assert any("torch.where" in f["after"] for f in fixes_of(report) if f["verified"])


def test_an_item_inside_a_callee_is_fixed_in_the_callee(tmp_path):
    report = check_verified(tmp_path, "callee")
    (fix,) = [f for f in fixes_of(report) if f["verified"]]
    assert "s = h.abs().mean()" in fix["after"]


def test_a_caller_side_fix_stays_a_suggestion(tmp_path):
    script = write(tmp_path, "frozen")
    expected = plain(tmp_path, script)
    got, report = analyzed(tmp_path, script)
    assert got == pytest.approx(expected, rel=1e-4)
    frozen = [f for f in fixes_of(report) if f["kind"] == "frozen-scalar"]
    print(json.dumps(frozen, indent=1))
    assert frozen and all(f["verified"] is None and f["verification"]["reason_code"] == "caller-side" for f in frozen)
