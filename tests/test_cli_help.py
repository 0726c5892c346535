"""Help pages and parser errors (issue 14 item 12): no Python type names, exit codes on
every page, and a parser error is one ``launchprof: error:`` line with exit 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("analyze", "lint", "report", "compare", "crossover")


def lp(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_type_names_and_lists_exit_codes(command):
    proc = lp(command, "--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert not re.search(r"<[a-z_\[\]A-Z ]+>", text), text  # <bool>, <list[Path]>, <int range>
    assert not re.search(r"\{[a-z_]+\}", text), text  # {script}
    assert "list[" not in text and "╭" not in text
    flat = " ".join(text.split())
    assert "Exit codes:" in flat and "2 usage error" in flat and "70 internal error" in flat
    assert "[bold]" not in text


def test_analyze_help_names_every_exit_code():
    text = " ".join(lp("analyze", "--help").stdout.split())
    for code in ("0 ok", "1 a --fail-on", "2 usage", "3 the script failed", "4 no usable CUDA", "70 internal", "130 interrupted"):
        assert code in text


@pytest.mark.parametrize(
    "args, says",
    [
        (("analyze", "--badopt"), "No such option: --badopt"),
        (("analyze",), "Missing argument"),
        (("nosuch",), "No such command"),
        (("analyze", "x.py", "--repeat", "1"), "--repeat"),
        (("lint", "--fail-on"), "--fail-on"),
        (("compare", "a.json"), "Missing argument"),
    ],
)
def test_parser_errors_are_one_line(args, says):
    proc = lp(*args)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("launchprof: error:") and says in lines[0]
    assert "Traceback" not in proc.stderr and "╭" not in proc.stderr


def test_no_arguments_prints_the_command_list():
    proc = lp()
    assert "analyze" in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    # The whole help page, on stderr, as a usage error (exit 2), not a one-line error.
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("Usage:")
    assert "launchprof: error:" not in proc.stderr and "Commands" in proc.stderr
