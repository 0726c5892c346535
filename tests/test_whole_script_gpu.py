"""On a GPU: whole-script candidates match an independent kernel count.

The reference is torch.profiler's own count of CUDA kernels for one call of the same
function in this process; launchprof's candidates must report that many per call, rank
the heavier function first, and give the command that analyses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = textwrap.dedent(
    """
    import torch

    W = torch.randn(64, 64, device="cuda")

    class Block:
        def forward(self, x):
            for _ in range(4):
                x = torch.relu(x @ W) + 1
            return x

    def light(x):
        return x * 2

    def main():
        x = torch.randn(32, 64, device="cuda")
        block = Block()
        for _ in range(20):
            x = block.forward(x)
            x = light(x)
        torch.cuda.synchronize()

    if __name__ == "__main__":
        main()
    """
)


def kernels_per_call(fn, *args) -> int:
    from torch.profiler import ProfilerActivity, profile

    fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if str(e.device_type).endswith("CUDA") and not e.name.startswith(("Memcpy", "Memset")))


def test_candidates_match_the_profilers_own_count(tmp_path):
    script = tmp_path / "heavy.py"
    script.write_text(SCRIPT)
    ns: dict = {}
    exec(compile(SCRIPT, str(script), "exec"), ns)
    x = torch.randn(32, 64, device="cuda")
    expected_block = kernels_per_call(ns["Block"]().forward, x)
    expected_light = kernels_per_call(ns["light"], x)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "launchprof", "analyze", str(script), "-o", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    by_name = {c["name"]: c for c in report["candidates"]}
    assert report["candidates"][0]["name"] == "Block.forward"
    assert by_name["Block.forward"]["calls"] == 20 and by_name["light"]["calls"] == 20
    assert by_name["Block.forward"]["kernels_per_call"] == pytest.approx(expected_block, abs=0.5)
    assert by_name["light"]["kernels_per_call"] == pytest.approx(expected_light, abs=0.5)
    assert by_name["Block.forward"]["command"].endswith("heavy.py --target Block.forward")
    assert all(h["severity"] == "info" for h in report["hazards"])
