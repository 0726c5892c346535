"""Usage errors are found before the GPU is looked at (issue 14 item 6).

This machine has no CUDA: every case below would exit 4 if the environment were
checked first, so an exit 2 proves the order. On a GPU machine they are still exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launchprof.commands.checks import check_target_defined
from launchprof.errors import UsageError
from launchprof.targets import parse_target

ROOT = Path(__file__).resolve().parent.parent


def lp(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_unknown_method_of_a_script_class():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "Decoder.nosuch")
    assert proc.returncode == 2
    assert "class Decoder has no attribute 'nosuch'" in one_line(proc)


def test_misspelt_method_gets_a_suggestion():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "Decoder.forwrd")
    assert proc.returncode == 2 and "Decoder.forward" in one_line(proc)


def test_session_report_as_profile():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "--profile", "tests/data/decode_loop.report.json")
    assert proc.returncode == 2 and "device profile" in one_line(proc)


def test_missing_project_root(tmp_path):
    proc = lp("analyze", "sample_models/decode_loop.py", "--project-root", str(tmp_path / "gone"))
    assert proc.returncode == 2 and "--project-root" in one_line(proc)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_output_in_proc_is_refused_even_as_root():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "-o", "/proc/x.json")
    assert proc.returncode == 2 and "/proc/x.json" in one_line(proc)


def test_empty_script_with_target(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("")
    proc = lp("analyze", str(empty), "--target", "step")
    assert proc.returncode == 2 and "defines nothing" in one_line(proc)


def test_fifo_script_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    proc = lp("analyze", str(fifo), timeout=60)
    assert proc.returncode == 2 and "not a regular file" in one_line(proc)
    assert time.monotonic() - t0 < 60


SRC = """
import torch
from torch import nn

class Base(nn.Module):
    def helper(self, x):
        return x

class Net(Base):
    def forward(self, x):
        return x

@decorated
class Open:
    pass

class Patched:
    pass
Patched.extra = lambda self: 1
"""


@pytest.mark.parametrize("name", ["Net.forward", "Net.helper", "Net.eval", "Open.anything", "Patched.extra", "step", "model.forward"])
def test_names_that_may_exist_are_accepted(name, tmp_path):
    check_target_defined(parse_target(name), tmp_path / "s.py", SRC)


@pytest.mark.parametrize("name", ["Net.nosuch", "Base.nosuch"])
def test_names_that_cannot_exist_are_refused(name, tmp_path):
    with pytest.raises(UsageError, match="has no attribute"):
        check_target_defined(parse_target(name), tmp_path / "s.py", SRC)


def test_star_import_is_never_refused(tmp_path):
    check_target_defined(parse_target("step"), tmp_path / "s.py", "from torch import *\n")
