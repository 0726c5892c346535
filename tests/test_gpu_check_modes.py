"""scripts/gpu-check's modes: each is a list of sections (GPU_CHECK_SECTIONS=1 prints it and
stops before installing anything), and every section a mode lists guards a block of the
script, so a mode cannot silently run nothing or a section be unreachable."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gpu-check"
MODES = ["all", "--quick", "--analyze", "--tests", "--crossover", "--ranks", "--new", "--compile", "--compile-gap",
         "--timing", "--wall", "--recheck", "--predict", "--faults"]


def sections(mode: str, tmp_path: Path) -> list[str]:
    args = [] if mode == "all" else [mode]
    proc = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out"), *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "GPU_CHECK_SECTIONS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "out").exists()  # a dry run creates nothing
    return proc.stdout.split()


def test_every_mode_runs_sections_the_script_guards(tmp_path: Path) -> None:
    guarded = set(re.findall(r"\bhas ([a-z-]+)", SCRIPT.read_text()))
    listed = {mode: sections(mode, tmp_path) for mode in MODES}
    assert all(listed.values()), listed
    assert set().union(*listed.values()) == guarded  # nothing listed without a block, no block unreachable
    # The usage line names every mode, and the modes the header documents are these.
    usage = re.search(r"usage: scripts/gpu-check OUTDIR \[(.+?)\]", SCRIPT.read_text())[1]
    assert sorted(m.strip() for m in usage.split("|")) == sorted(MODES[1:])


@pytest.mark.parametrize("mode, expected", [
    ("all", ["ranks-analyze", "crossover-quick", "analyze", "crossover-twice", "gpu-tests", "faults"]),
    ("--quick", ["crossover-quick", "quick-analyze", "gpu-tests"]),
    ("--analyze", ["ranks-analyze", "crossover-quick", "analyze", "crossover-twice"]),
    ("--tests", ["gpu-tests", "faults"]),
    ("--crossover", ["crossover-quick", "crossover-twice", "crossover-wall"]),
    ("--ranks", ["ranks-analyze", "ranks-tests"]),
    ("--compile", ["compile"]),
    ("--faults", ["faults"]),
])
def test_the_big_modes_keep_their_sections(mode: str, expected: list[str], tmp_path: Path) -> None:
    assert sections(mode, tmp_path) == expected


def test_an_unknown_mode_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out"), "--bogus"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "unknown mode --bogus" in proc.stderr


def test_the_process_ending_fault_scenarios_are_the_ones_run_one_at_a_time() -> None:
    """gpu-check runs the scenarios that end a process abnormally one at a time (beside them,
    others failed with "unspecified launch failure" on the H200). Its -k words must keep
    naming exactly those tests: a renamed test would move into the parallel run unnoticed."""
    words = re.search(r'^\s*ENDED="(.+)"$', SCRIPT.read_text(), re.M)[1].split(" or ")
    faults = (SCRIPT.parent.parent / "tests" / "test_gpu_faults.py").read_text()
    names = re.findall(r"^def (test_\w+)", faults, re.M)
    matched = {n for n in names for w in words if w in n}
    assert matched == {"test_worker_killed_by_signal", "test_sticky_cuda_error", "test_hang_is_stopped_by_timeout"}, (words, names)
