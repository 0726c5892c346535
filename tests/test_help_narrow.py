"""``--help`` on a terminal narrower than click's 50-column floor fits the terminal.

click sizes help by ``COLUMNS`` (or the tty) but never below 50 columns, so at
``COLUMNS=30`` every page ran 20 columns past the edge. Only a word longer than the
width may stick out: the program name on the usage line and an option's spelling.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("analyze", "lint", "report", "compare", "crossover")


def help_page(columns: int, *command: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-m", "launchprof", *command, "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def unbreakable(line: str) -> bool:
    """The usage line's program name, or an option's own spelling (``  --show-output / --hide-output``)."""
    return line.startswith("Usage: ") or (line.startswith("  -") and len(line.split()) <= 5 and "  " not in line.strip())


@pytest.mark.parametrize("columns", [30, 40, 50])
@pytest.mark.parametrize("command", [(), *((c,) for c in COMMANDS)])
def test_help_fits_a_narrow_terminal(columns, command):
    lines = help_page(columns, *command)
    too_wide = [line for line in lines if len(line) > columns and not unbreakable(line)]
    assert too_wide == [], "\n".join(lines)
    assert any("Exit codes:" in line for line in lines) or not command


def test_narrow_option_text_goes_below_the_option():
    lines = help_page(40, "lint")
    at = lines.index("  -t, --target NAME")
    assert lines[at + 1].startswith("    Check this function")


def test_an_80_column_page_keeps_option_and_text_on_one_line():
    lines = help_page(80, "lint")
    assert any(line.startswith("  -t, --target NAME") and "Check this function" in line for line in lines)
    assert max(map(len, lines)) <= 78
