"""--quiet, the capped terminal listing, and where the script's own output goes.

The worker is real; no CUDA here, so it stops at its CUDA check. A fake ``torch`` put
first on PYTHONPATH prints a line to stdout when the worker imports it: that line stands
for the script's output and must go where ``python SCRIPT`` would send it, except to
stderr when a report is being written to stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARK = "hello-from-the-script-side"


def lp(*args: str, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    path = str(ROOT) if extra_path is None else f"{extra_path}{os.pathsep}{ROOT}"
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "80"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.fixture
def fake_torch(tmp_path: Path) -> Path:
    pkg = tmp_path / "fake" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        f"print({MARK!r}, flush=True)\n"
        "class cuda:\n"
        "    @staticmethod\n"
        "    def is_available():\n"
        "        return False\n"
    )
    return tmp_path / "fake"


def test_script_output_passes_through_by_default(fake_torch):
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", extra_path=fake_torch)
    assert proc.returncode == 4, proc.stderr
    assert MARK in proc.stdout


def test_report_on_stdout_sends_script_output_to_stderr(fake_torch):
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "-f", "json", extra_path=fake_torch)
    assert proc.returncode == 4, proc.stderr
    assert MARK not in proc.stdout and MARK in proc.stderr


def test_hide_output_keeps_it_off_the_terminal(fake_torch):
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "--hide-output", extra_path=fake_torch)
    assert proc.returncode == 4
    assert MARK not in proc.stdout + proc.stderr


def test_quiet_hides_script_output_but_not_the_error(fake_torch):
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "--quiet", extra_path=fake_torch)
    assert proc.returncode == 4
    assert proc.stdout == "" and MARK not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("launchprof: error:")


@pytest.mark.parametrize("command", [("lint", "sample_models", "--all"), ("report", "tests/data/runs/decode_loop.lprun")])
def test_quiet_prints_nothing_on_success(command, tmp_path):
    assert Path(ROOT / "tests/data/runs/decode_loop.lprun").is_file(), "recorded run missing"
    loud = lp(*command, "-o", str(tmp_path / "r.json"))
    assert loud.returncode == 0 and loud.stdout and "wrote json report" in loud.stderr
    quiet = lp(*command, "-o", str(tmp_path / "q.json"), "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    q, r = (json.loads((tmp_path / n).read_text()) for n in ("q.json", "r.json"))
    assert q["verdict"] == r["verdict"] and len(q["hazards"]) == len(r["hazards"])


def test_quiet_keeps_a_report_sent_to_stdout():
    proc = lp("lint", "sample_models", "--all", "-f", "json", "--quiet")
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["mode"] == "lint"


def test_quiet_compare_and_usage_errors_still_show(tmp_path):
    run = "tests/data/runs/decode_loop.lprun"
    proc = lp("compare", run, run, "--quiet")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    bad = lp("report", str(tmp_path / "missing.lprun"), "--quiet")
    assert bad.returncode == 2 and bad.stderr.startswith("launchprof: error:")


def test_thousands_of_findings_are_capped_on_the_terminal(tmp_path):
    body = ["import torch", ""]
    for i in range(1500):
        body += [f"def f{i}(x):", "    a = x.item()", "    b = x.cpu()", "    return a, b", ""]
    huge = tmp_path / "huge.py"
    huge.write_text("\n".join(body))
    out = tmp_path / "h.json"
    t0 = time.monotonic()
    proc = lp("lint", str(huge), "--all", "-o", str(out))
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    total = len(json.loads(out.read_text())["hazards"])
    assert total >= 3000
    assert f"{total - 50} more finding(s) in {out}" in " ".join(proc.stdout.split())
    assert proc.stdout.count("hidden-sync") <= 60
    assert f"{total} hazards: {total} errors, 0 warnings, 0 info" in proc.stdout  # counted in full, not the 50 shown
    assert elapsed < 120


def test_quiet_keeps_the_github_annotations() -> None:
    """-q silences launchprof's chatter, not the findings a CI log shows: with --github the
    annotations still reach standard error, and nothing else does."""
    target = ["lint", "sample_models/hidden_sync.py", "--target", "step", "--github"]
    loud, quiet = lp(*target), lp(*target, "-q")
    annotations = [line for line in loud.stderr.splitlines() if line.startswith("::")]
    assert annotations and any(line.startswith("::error ") for line in annotations)
    assert quiet.stderr.splitlines() == annotations
    assert quiet.stdout == "" and quiet.returncode == loud.returncode == 0
