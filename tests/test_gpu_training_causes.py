"""A training step's capture failures named by their cause, on a real GPU (skipped without CUDA).

Each test writes a small training script, runs ``launchprof analyze`` on it as a user would,
and checks the kind, the line it is filed at, and the fix: a loop that keeps the returned
``loss`` (kept-autograd-graph at the caller's line, never a hidden sync at ``loss.backward()``),
Adam built without capturable=True (at its constructor), and a GradScaler (at ``scaler.step``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent

HEAD = '''\
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
{optimizer}
scaler = torch.amp.GradScaler("cuda")


def step(x, y):
    opt.zero_grad(set_to_none=True)
{body}


def main():
    x = torch.randn(32, 64, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    for _ in range(60):
        loss = step(x, y)
    print(float(loss))


if __name__ == "__main__":
    main()
'''
PLAIN = '''\
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return {returned}'''
AMP = '''\
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.detach()'''
CAPTURABLE = "opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)"


def analyze(tmp_path: Path, optimizer: str, body: str) -> tuple[dict, Path]:
    script = tmp_path / "train.py"
    script.write_text(HEAD.format(optimizer=optimizer, body=body), encoding="utf-8")
    out = tmp_path / "train.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(script), "--target", "step", "-o", str(out)],
        capture_output=True, text=True, timeout=400, cwd=tmp_path,
    )
    assert out.exists(), proc.stderr[-3000:]
    return json.loads(out.read_text()), script


def line_of(script: Path, piece: str) -> int:
    return next(i for i, text in enumerate(script.read_text(encoding="utf-8").splitlines(), 1) if piece in text)


def test_a_kept_loss_is_a_kept_autograd_graph_at_the_callers_line(tmp_path: Path) -> None:
    report, script = analyze(tmp_path, CAPTURABLE, PLAIN.format(returned="loss"))
    # Released for the measurement and captured again: as written it does not capture (no
    # graphs-help over an error hazard); the figures read "once fixed".
    assert report["verdict"] == "not-capturable", report["hazards"]
    assert [f["kind"] for f in report["assumes_fix"]] == ["kept-autograd-graph"]
    kept = [h for h in report["hazards"] if h["kind"] == "kept-autograd-graph"]
    assert len(kept) == 1, report["hazards"]
    h = kept[0]
    assert h["line"] == line_of(script, "loss = step(x, y)") and h["params"]["name"] == "loss"
    assert h["params"]["failed_line"] == line_of(script, "loss.backward()")
    assert h["fix"]["after"] == "return loss.detach()" and h["fix"]["line"] == line_of(script, "return loss")
    assert not [x for x in report["hazards"] if x["kind"] == "hidden-sync"], report["hazards"]  # no sync at backward
    codes = {f["code"] for f in report["findings"]}
    assert "independent-chains" not in codes  # no fork/join onto a second stream inside backward
    print("kept-autograd-graph:", h["message"])


def test_adam_without_capturable_is_fixed_at_its_constructor(tmp_path: Path) -> None:
    report, script = analyze(tmp_path, "opt = torch.optim.Adam(model.parameters(), lr=1e-3)", PLAIN.format(returned="loss.detach()"))
    found = [h for h in report["hazards"] if h["kind"] == "optimizer-not-capturable"]
    assert len(found) == 1, report["hazards"]
    h = found[0]
    assert h["line"] == line_of(script, "opt = torch.optim.Adam(") and h["params"]["optimizer"] == "Adam"
    assert h["fix"]["after"] == "opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)"


def test_grad_scaler_is_filed_at_scaler_step_with_ranked_options(tmp_path: Path) -> None:
    report, script = analyze(tmp_path, CAPTURABLE, AMP)
    found = [h for h in report["hazards"] if h["kind"] == "grad-scaler"]
    assert len(found) == 1, report["hazards"]
    h = found[0]
    assert h["line"] == line_of(script, "scaler.step(opt)")
    assert h["details"]["library_frame"]["file"].endswith("torch/amp/grad_scaler.py")
    assert h["details"]["library_frame"]["function"] == "_maybe_opt_step"
    fix = h["fix"]
    assert fix["params"]["options"][0] == "fused-optimizer"  # AdamW takes fused=True, and this torch's GradScaler skips its read then
    assert fix["after"] == "opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True, fused=True)"
    assert "launchprof cannot write the fix" not in fix["note"]
