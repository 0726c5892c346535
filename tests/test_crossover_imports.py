"""crossover's wall time is the whole process (--quick within 10 s, the default within 30 s
on the H200: tests/test_crossover_wall_gpu.py), so what its process imports outside the
sweep counts. Two imports it does not need cost seconds: torch._inductor (with
torch._dynamo and sympy), which ``torch.profiler.profile`` imports when a session starts,
and scipy.stats (about 0.8 s on the CI machine), where the fit needs one t quantile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("torch")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, timeout=180, check=True).stdout
    return set(out.split())


def test_the_kernel_trace_session_does_not_import_the_compiler_stack():
    code = (
        "import torch\n"
        "from launchprof.crossover.phases import kernel_trace\n"
        "with kernel_trace(None) as prof:\n"
        "    torch.zeros(3).add_(1.0)\n"
        "assert any(e.name == 'aten::add_' for e in prof.function_events), [e.name for e in prof.function_events]\n"
    )
    loaded = _modules_after(code)
    assert "torch.autograd.profiler" in loaded
    assert not {"torch._inductor", "torch._dynamo", "sympy"} & loaded


def test_fitting_a_default_sweep_uses_scipy_special_not_scipy_stats():
    code = (
        "from launchprof.crossover.fit import derive_profile\n"
        "from launchprof.crossover.plans import DEFAULT_PLAN\n"
        "from launchprof.crossover.simulate import simulate_samples\n"
        "from launchprof.model.machine import collect_machine\n"
        "p = derive_profile(simulate_samples(DEFAULT_PLAN), collect_machine(), plan='default')\n"
        "assert p.graph_gap_us is not None and p.graph_gap_us.low < p.graph_gap_us.high\n"
    )
    loaded = _modules_after(code)
    assert "scipy.special" in loaded  # the residual t-interval of the gap's line ran
    assert "scipy.stats" not in loaded
