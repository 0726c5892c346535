"""``.ci/run``, run with a stand-in ``python3`` that records its calls: it must never replace a
torch that imports, keep its scratch files in a private folder it removes, accept lint's
exit 1 (findings) and still fail when the tests fail."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / ".ci" / "run"

# Records each call; answers `-c "import torch"`, lint and pytest with the exit codes the test chooses.
FAKE_PYTHON = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$CALLS"
case "$*" in
  "-c import torch") exit "$TORCH_RC" ;;
  "-m launchprof lint"*)
    prev=""
    for a in "$@"; do
      if [ "$prev" = "-o" ]; then printf 'OUT %s\\n' "$a" >> "$CALLS"; fi
      prev="$a"
    done
    exit "$LINT_RC" ;;
  "-m pytest"*) exit "$PYTEST_RC" ;;
esac
exit 0
"""


def run_ci(tmp_path: Path, torch_rc: int = 0, lint_rc: int = 1, pytest_rc: int = 0) -> tuple[int, list[str], Path]:
    bin_dir, temp = tmp_path / "bin", tmp_path / "tmp"
    bin_dir.mkdir()
    temp.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    calls = tmp_path / "calls.txt"
    env = {
        **os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(temp), "CALLS": str(calls),
        "TORCH_RC": str(torch_rc), "LINT_RC": str(lint_rc), "PYTEST_RC": str(pytest_rc), "CI": "true",
    }  # fmt: skip
    proc = subprocess.run(["bash", str(CI)], env=env, capture_output=True, text=True, timeout=60)
    return proc.returncode, calls.read_text().splitlines(), temp


def test_the_script_parses() -> None:
    assert subprocess.run(["bash", "-n", str(CI)], capture_output=True).returncode == 0


def test_a_torch_that_imports_is_never_replaced(tmp_path: Path) -> None:
    code, calls, _ = run_ci(tmp_path, torch_rc=0)
    assert code == 0, calls
    assert calls[0] == "-c import torch"
    assert not [c for c in calls if "install" in c and "torch" in c], calls
    assert "-m pip install -q -e .[dev]" in calls and calls[-1] == "-m pytest -q"


def test_without_torch_the_cpu_torch_is_installed_first(tmp_path: Path) -> None:
    code, calls, _ = run_ci(tmp_path, torch_rc=1)
    assert code == 0, calls
    assert calls.index("-m pip install -q torch==2.13.0") < calls.index("-m pip install -q -e .[dev]")


def test_the_lint_report_goes_to_a_private_folder_that_is_removed(tmp_path: Path) -> None:
    code, calls, temp = run_ci(tmp_path)
    assert code == 0, calls  # lint's exit 1 (findings) is accepted
    out = Path(next(c for c in calls if c.startswith("OUT ")).removeprefix("OUT "))
    assert out.parent.parent == temp  # mktemp -d under $TMPDIR, not a fixed shared name
    assert not out.parent.exists() and list(temp.iterdir()) == []


@pytest.mark.parametrize(("lint_rc", "pytest_rc"), [(0, 1), (2, 0)], ids=["tests-fail", "lint-usage-error"])
def test_a_failure_fails_the_script(tmp_path: Path, lint_rc: int, pytest_rc: int) -> None:
    code, _, temp = run_ci(tmp_path, lint_rc=lint_rc, pytest_rc=pytest_rc)
    assert code != 0
    assert list(temp.iterdir()) == []  # removed on the way out too
