"""A standard output that cannot take the bytes (a full disk; ``> /dev/full``) is the user's
environment: one line and exit 2, like an unwritable ``-o``, not an internal error (70)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "runs" / "decode_loop.lprun"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["report", str(RUN), "-f", "json"], ["lint", str(ROOT / "sample_models")], ["--version"], ["--help"], ["lint", "--help"]])
def test_a_full_stdout_is_a_usage_error(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "launchprof", *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["launchprof: error: cannot write to standard output: No space left on device"], proc.stderr
