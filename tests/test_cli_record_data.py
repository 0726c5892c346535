"""scripts/record-test-data: one-line errors, and copying runs out of gpu-check results."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "record-test-data"
RUNS = ROOT / "tests" / "data" / "runs"


def record(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def a_run() -> Path:
    runs = sorted(RUNS.glob("*.lprun"))
    assert runs, "tests/data/runs holds no recorded runs"
    return runs[0]


def test_missing_argument():
    assert "record-test-data: error:" in one_line(record())


def test_missing_folder(tmp_path):
    assert "folder not found" in one_line(record(str(tmp_path / "nope")))


def test_missing_out_parent(tmp_path):
    assert "folder not found" in one_line(record(str(tmp_path), "--out", str(tmp_path / "a" / "b")))


def test_empty_folder(tmp_path):
    (tmp_path / "out").mkdir()
    assert "no raw runs" in one_line(record(str(tmp_path), "--out", str(tmp_path / "out")))


def test_copies_runs_from_a_gpu_check_folder_and_its_archive(tmp_path):
    run = a_run()
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    shutil.copy(run, results / "runs" / run.name.replace(".lprun", ".1.lprun"))
    out = tmp_path / "out"
    proc = record(str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / run.name).read_bytes() == run.read_bytes()

    archive = tmp_path / "results.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(results / "runs", arcname="runs")
    out2 = tmp_path / "out2"
    proc = record(str(archive), "--out", str(out2))
    assert proc.returncode == 0, proc.stderr
    assert (out2 / run.name).read_bytes() == run.read_bytes()


def test_corrupt_run_is_one_line(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bad.lprun").write_bytes(b"not a run")
    assert "bad.lprun" in one_line(record(str(tmp_path), "--out", str(tmp_path / "out")))
