"""Wall time of `launchprof crossover` on a CUDA device, the whole process as a user times it
(`time python -m launchprof crossover --quick`): --quick within 10 s and the default sweep
within 30 s on the H200. Skips cleanly without CUDA.

Each test prints where the time went: the sweep's phases (its "sweep took" line) and the
rest of the process (imports, the CUDA context, the fit, the tables). Run alone with:

    PYTHONPATH=$PWD python3 -m pytest -q -s tests/test_crossover_wall_gpu.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA device", allow_module_level=True)

from launchprof.crossover.profile import DeviceProfile, load_profile  # noqa: E402

pytestmark = pytest.mark.gpu

QUICK_BUDGET_S = 10.0
DEFAULT_BUDGET_S = 30.0


def crossover(tmp: Path, name: str, *args: str) -> tuple[float, DeviceProfile]:
    """One `python -m launchprof crossover ARGS -o PROFILE` process: its wall time and profile."""
    out = tmp / f"{name}.json"
    env = dict(os.environ, LAUNCHPROF_CACHE_DIR=str(tmp / "cache"))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "launchprof", "crossover", *args, "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"sweep took ([0-9.]+) s[^\n\x1b]*", done.stderr)
    assert found is not None, done.stderr[-2000:]
    sweep_line, swept_s = found.group(0), float(found.group(1))
    print(f"\ncrossover {' '.join(args) or '(default)'}: {wall:.1f} s wall; {sweep_line}; outside the sweep {wall - swept_s:.1f} s")
    for phase in ("calibrate", "host rounds", "floor", "graph sweep", "kernel trace"):
        assert phase in sweep_line, sweep_line
    return wall, load_profile(out).profile


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("crossover-wall")


def test_quick_takes_at_most_10_s_once_the_machine_has_run_it(tmp):
    # The first run on a machine also compiles bytecode, fills the page cache and cupy's
    # kernel cache: a user's every later run does not pay that again.
    first, _ = crossover(tmp, "first", "--quick")
    wall, p = crossover(tmp, "quick", "--quick")
    assert wall <= QUICK_BUDGET_S, f"--quick took {wall:.1f} s (the first run {first:.1f} s)"
    assert not p.partial and p.plan == "quick"
    # no kernel trace: the profile says so and analysis takes a node's excess as 0
    assert p.empty_kernel_us is None and any(n.startswith("kernel trace skipped") for n in p.notes)
    # the checks test_crossover_gpu.py makes of --quick's figures hold
    for name in ("eager_op_us", "graph_launch_fixed_us", "graph_node_us", "floor_node_us", "instantiate_node_us"):
        assert getattr(p, name) is not None and getattr(p, name).median > 0, (name, p.notes)
    assert 1 / 1.5 < p.graph_node_us.median / p.floor_node_us.median < 1.5, (p.graph_node_us, p.floor_node_us)


def test_the_default_sweep_takes_at_most_30_s(tmp):
    wall, p = crossover(tmp, "default")
    assert wall <= DEFAULT_BUDGET_S, f"the default sweep took {wall:.1f} s"
    assert not p.partial and p.plan == "default"
    assert p.empty_kernel_us is not None and p.empty_kernel_us.median > 0, p.notes  # the kernel trace ran and found the spin kernel
    assert 1 / 1.5 < p.graph_node_us.median / p.floor_node_us.median < 1.5, (p.graph_node_us, p.floor_node_us)
    assert p.eager_op_us is not None and p.eager_op_us.median > p.graph_node_us.median
