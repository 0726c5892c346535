"""Launchprof's dispatch modes (the op recorder, the probe's tracker) do not import torch._dynamo.

A fresh interpreter each: whether torch._dynamo is imported is process state.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import sys, torch
from torch.utils._python_dispatch import TorchDispatchMode
from launchprof.worker.dispatch_modes import without_dynamo_import, _raw_dispatch
from launchprof.worker.op_sequence import recorded_call, _OpRecorder
from launchprof.worker.probe import probe_call, _OpTracker

x = torch.randn(8, 8)
step = lambda a: (a @ a).relu().sum()
out, seq = recorded_call(step, (x,), {})
assert torch.equal(out, step(x)) and seq.count == 3, seq
probe_call(step, (x,), {})
print("dynamo after our modes:", "torch._dynamo" in sys.modules)
for klass in (_OpRecorder, _OpTracker):
    raw = _raw_dispatch(klass)
    print("left patched:", raw is not None and hasattr(raw, "__dynamo_disable"))

class Plain(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

with Plain():
    step(x)
print("dynamo after a plain mode:", "torch._dynamo" in sys.modules)
with without_dynamo_import(Plain):
    raw = _raw_dispatch(Plain)
    print("patched once imported:", getattr(raw, "__dynamo_disable", None) is raw)
"""


def test_our_modes_leave_torch_dynamo_unimported_and_unpatched():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert "dynamo after our modes: False" in lines, proc.stdout
    assert lines.count("left patched: False") == 2, proc.stdout
    # torch's own wrapper still imports it for a mode used outside the block: the check above could fail
    assert "dynamo after a plain mode: True" in lines, proc.stdout
    assert "patched once imported: False" in lines, proc.stdout
