"""A launchprof profiler session does not import torch._inductor (its start would, to read one
inductor setting), and torch's lazy attributes work as before once it has started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import sys, torch
from launchprof.worker.profiler_tables import new_profile
lazy = torch.__getattr__
x = torch.randn(8, 8)
with new_profile() as prof:
    (x @ x).sum()
print("inductor after our session:", "torch._inductor" in sys.modules)
print("lazy getattr restored:", torch.__getattr__ is lazy)
print("events:", prof.events() is not None)
from torch.profiler import profile
with profile():
    (x @ x).sum()
print("inductor after torch's own session:", "torch._inductor" in sys.modules)
"""


def test_a_session_leaves_torch_inductor_unimported():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert "inductor after our session: False" in lines, proc.stdout
    assert "lazy getattr restored: True" in lines, proc.stdout
    assert "events: True" in lines, proc.stdout
    assert "inductor after torch's own session: True" in lines, proc.stdout  # the check above could fail
