"""Text reports piped or redirected carry no padding spaces at line ends (rich pads table
cells and panels to the console width), and the compare listing wraps under a hanging
indent instead of running past the width."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from launchprof.fileio.output_files import TrimmedLines

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "data" / "runs"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_trimmed_lines_strips_only_line_end_spaces_across_writes():
    inner = io.StringIO()
    out = TrimmedLines(inner)
    out.write("a  b   ")
    out.write("  \nnext line  \n  indented")
    out.flush()
    assert inner.getvalue() == "a  b\nnext line\n  indented"


def test_a_piped_report_has_no_trailing_spaces_and_keeps_its_table():
    done = cli("report", str(RUNS / "side_effects.lprun"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("Eager step") for line in lines)
    assert [line for line in lines if line != line.rstrip(" ")] == []


def test_compare_wraps_hazard_lines_to_the_width():
    done = cli("compare", str(RUNS / "hidden_sync.lprun"), str(RUNS / "unjoined_stream.lprun"))
    assert done.returncode in (0, 1), done.stderr
    after = done.stdout.split("Hazards removed:")[1]
    assert "hidden-sync at sample_models/hidden_sync.py:15" in after
    assert all(len(line) <= 80 for line in done.stdout.splitlines()), max(done.stdout.splitlines(), key=len)
    # continuation lines hang under the message, not under the severity
    continuation = [line for line in after.splitlines()[1:] if line.startswith("        ")]
    assert continuation
