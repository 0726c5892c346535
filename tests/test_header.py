"""The run file's header: one builder for ``analyze`` and the in-process API."""

from __future__ import annotations

from pathlib import Path

from launchprof import __version__
from launchprof.run.header import run_header
from launchprof.run.header_records import RUN_FORMAT_VERSION, WorkerOutcome
from launchprof.model.core import Machine

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")


def test_the_header_names_the_script_under_the_root_and_the_machine(tmp_path: Path) -> None:
    worker = WorkerOutcome(returncode=0, wall_s=1.5)
    h = run_header(tmp_path / "models" / "step.py", "step", tmp_path, worker, 20, argv=("--n", "3"), machine=H200)
    assert (h.format_version, h.launchprof_version) == (RUN_FORMAT_VERSION, __version__)
    assert (h.script, h.target, h.argv, h.project_root, h.repeat) == ("models/step.py", "step", ["--n", "3"], str(tmp_path), 20)
    assert h.worker is worker and h.machine is H200
    assert h.created.endswith("+00:00")


def test_no_machine_gives_none(tmp_path: Path) -> None:
    assert run_header("s.py", None, tmp_path, WorkerOutcome(), 50).machine is None
