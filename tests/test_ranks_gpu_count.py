"""Before N ranks start, the GPUs are counted in a child process: none is exit 4 in one
line, fewer than N is a usage error (exit 2), and nothing is launched or written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.commands.analyze_ranks import check_rank_gpus
from launchprof.errors import EnvironmentProblem, UsageError

ROOT = Path(__file__).resolve().parent.parent


def test_no_gpu_is_the_environment_and_too_many_ranks_is_usage(monkeypatch):
    with pytest.raises(EnvironmentProblem, match="needs 2 GPUs"):
        check_rank_gpus(2, count=0)
    with pytest.raises(UsageError, match="more ranks than the 2 GPU"):
        check_rank_gpus(9999, count=2)
    check_rank_gpus(2, count=2)
    monkeypatch.setattr("launchprof.commands.analyze_ranks.visible_gpus", lambda: None)
    check_rank_gpus(2)  # the count cannot be told: the launcher finds out


def test_analyze_with_ranks_on_a_machine_without_cuda_says_so_once(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(ROOT / "sample_models" / "tp_mlp.py"), "--target", "step", "--nproc-per-node", "64"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert done.returncode == 4, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]  # one line
    assert "no CUDA device" in done.stderr
    assert not (tmp_path / ".launchprof").exists()
