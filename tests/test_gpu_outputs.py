"""kept-output and loop-back on a real GPU: the two samples end to end, and the watch's
copy timing against a plain timing loop in the same process (skipped without CUDA)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.recorded import SAMPLES, expected_markers
from tests.test_outputs_watch import Wrapped, decode

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent


def analyze(tmp_path: Path, sample: str) -> dict:
    out = tmp_path / f"{sample}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(SAMPLES / f"{sample}.py"), "--target", "step", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_decode_keeps_outputs_names_history_at_the_append_line(tmp_path):
    report = analyze(tmp_path, "decode_keeps_outputs")
    assert report["replay"] is not None and report["validation"]["matches"] == report["validation"]["calls_compared"] >= 1
    marked = {line for kind, name, line in expected_markers(SAMPLES / "decode_keeps_outputs.py") if kind == "kept-output"}
    kept = [h for h in report["hazards"] if h["kind"] == "kept-output"]
    assert len(kept) == 1, report["hazards"]
    h = kept[0]
    assert h["severity"] == "warning" and h["file"] == "sample_models/decode_keeps_outputs.py" and {h["line"]} == marked
    assert "`history` (a list in `main()`) keeps every step's `logits`" in h["message"], h["message"]
    assert "`history.append(logits.clone())`" in h["message"]
    outputs = report["outputs"]
    assert [(k["holder"], k["name"], k["holder_kind"]) for k in outputs["kept"]] == [("history", "logits", "list")]
    # One output, kept: the user's graph needs the whole measured clone.
    assert outputs["clone_all_us"] == pytest.approx(report["replay"]["clone_us"]["median"])
    assert outputs["clone_needed_us"] == pytest.approx(outputs["clone_all_us"])
    assert outputs["loop_back"] == []
    print("decode_keeps_outputs:", h["message"])


def test_recurrent_state_loops_back_without_a_warning(tmp_path):
    report = analyze(tmp_path, "recurrent_state")
    assert not [h for h in report["hazards"] if h["severity"] in ("error", "warning")], report["hazards"]
    loops = [h for h in report["hazards"] if h["kind"] == "loop-back"]
    assert len(loops) == 1 and loops[0]["severity"] == "info" and loops[0]["details"]["argument"] == "h"
    src = (SAMPLES / "recurrent_state.py").read_text().splitlines()
    assert src[loops[0]["line"] - 1].strip() == "logits, h = step(xs[t], h)"
    assert "`h_static.copy_(h_new)`" in loops[0]["message"]
    lb = report["outputs"]["loop_back"]
    assert [(x["argument"], x["output"], x["how"]) for x in lb] == [("h", "[1]", "same-object")]
    assert lb[0]["bytes"] == 8 * 512 * 4 and 0 < lb[0]["copy_us"] < 1000
    assert report["outputs"]["kept"] == [] and report["outputs"]["clone_needed_us"] == 0.0
    assert report["validation"]["matches"] == report["validation"]["calls_compared"] >= 1
    print("recurrent_state:", loops[0]["message"])


def test_loop_back_copy_cost_matches_a_plain_copy_loop():
    """The watch's copy_us against the plainest measurement, in this process: the same
    copy in a synchronised loop of 200."""
    step = Wrapped(decode)
    h = torch.randn(64, 4096, device="cuda")
    for _ in range(10):
        logits, h = step(torch.ones(64, 4096, device="cuda"), h)
    loops = step.events.of("loop-back")
    assert [(e["argument"], e["how"]) for e in loops] == [("h", "same-object")]
    dst = torch.empty_like(h)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(200):
        dst.copy_(h, non_blocking=True)
    torch.cuda.synchronize()
    plain = (time.perf_counter() - start) * 1e6 / 200
    assert 0.33 * plain <= loops[0]["copy_us"] <= 3 * plain, (loops[0]["copy_us"], plain)
