"""analyze's usage and environment errors: one line, the documented exit code, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lp(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_missing_script(tmp_path):
    proc = lp("analyze", str(tmp_path / "nope.py"))
    assert proc.returncode == 2
    assert "script not found" in one_line_error(proc)


def test_directory_instead_of_script(tmp_path):
    proc = lp("analyze", str(tmp_path))
    assert proc.returncode == 2
    assert "is a folder" in one_line_error(proc)


@pytest.mark.parametrize("saved, kind", [("tests/data/decode_loop.report.json", "JSON file (a report or a device profile)"), ("tests/data/runs/decode_loop.lprun", "run file")])
def test_a_saved_report_or_run_is_not_a_script(saved, kind):
    """A JSON report parses as Python (one dict literal): it must not run as the script."""
    proc = lp("analyze", saved, "--target", "step")
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert f"is a saved {kind}, not a Python script" in line and "launchprof report FILE" in line


def test_syntax_error_names_the_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\ndef f(:\n")
    proc = lp("analyze", str(bad))
    assert proc.returncode == 2
    assert "bad.py:2" in one_line_error(proc)


def test_unknown_target_before_environment(tmp_path):
    # Reported as a usage error even on a machine with no GPU: usage errors come first.
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "stpe")
    assert proc.returncode == 2
    assert "unknown target 'stpe'" in one_line_error(proc)


def test_bad_target_syntax():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "a..b")
    assert proc.returncode == 2


def test_unknown_format_and_missing_output_folder(tmp_path):
    assert lp("analyze", "sample_models/decode_loop.py", "-f", "pdf").returncode == 2
    proc = lp("analyze", "sample_models/decode_loop.py", "-o", str(tmp_path / "no" / "r.json"))
    assert proc.returncode == 2
    assert "does not exist" in one_line_error(proc)


def test_no_cuda_is_exit_4():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step")
    assert proc.returncode == 4
    line = one_line_error(proc)
    assert "no CUDA device" in line and "lint" in line


def test_help_and_version():
    assert "--target" in lp("analyze", "--help").stdout
    out = lp("--version")
    assert out.returncode == 0 and out.stdout.startswith("launchprof ")


def test_run_out_and_project_root_are_checked_first(tmp_path):
    proc = lp("analyze", "sample_models/decode_loop.py", "--run-out", str(tmp_path / "no" / "r.lprun"))
    assert proc.returncode == 2 and "--run-out" in one_line_error(proc)
    proc = lp("analyze", "sample_models/decode_loop.py", "--project-root", str(tmp_path / "missing"))
    assert proc.returncode == 2 and "--project-root" in one_line_error(proc)


@pytest.mark.parametrize("command", [("analyze", "sample_models/decode_loop.py"), ("lint", "sample_models"), ("report", "r.lprun")])
def test_the_project_root_has_one_name(command, tmp_path):
    proc = lp(*command, "--source-root", str(tmp_path))
    line = one_line_error(proc)
    assert proc.returncode == 2 and line.startswith("launchprof: error: No such option: --source-root") and "--project-root" in line


