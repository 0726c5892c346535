"""A reader that leaves early (``launchprof ... | head -1``) must not change the exit code:
rich answers a broken pipe with exit status 1, which a CI gate reads as "a rule was met"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "tests" / "data" / "runs"


def _first_line_then_close(*args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    proc = subprocess.Popen([sys.executable, "-m", "launchprof", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader leaves, as `head -1` does
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), first.decode() + err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("compare", str(RUNS / "decode_loop.lprun"), str(RUNS / "long_kernels.lprun")), 0),
        (("compare", str(RUNS / "decode_loop.lprun"), str(RUNS / "long_kernels.lprun"), "--fail-on", "speedup:-10%"), 1),
        (("lint", str(REPO / "sample_models"), "--all"), 0),
    ],
)
def test_an_early_closing_reader_keeps_the_exit_code(args: tuple[str, ...], code: int) -> None:
    assert all(Path(a).exists() for a in args if a.endswith(".lprun")), "recorded runs are missing"
    rc, out = _first_line_then_close(*args)
    assert rc == code, out
    assert "Traceback" not in out and "BrokenPipe" not in out
