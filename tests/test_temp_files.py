"""launchprof leaves nothing in the temp folder of a normal run, nor of a worker that never
returned; the test suite's own temp folder is pytest's (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "runs" / "decode_loop.lprun"


def launchprof_entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("launchprof", ".launchprof")))


def test_report_lint_and_analyze_leave_nothing_in_the_temp_folder(tmp_path: Path) -> None:
    """analyze stops at the missing GPU here (exit 4), after its worker ran in a temp folder."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": ""}
    commands = [
        (["report", str(RUN), "-f", "json", "-o", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")], 0),
        (["lint", str(ROOT / "sample_models"), "--all", "-f", "json", "-o", str(tmp_path / "l.json")], 0),
        (["analyze", str(ROOT / "sample_models" / "decode_loop.py"), "--target", "step", "--run-out", str(tmp_path / "a.lprun")], None),
    ]
    for args, expected in commands:
        proc = subprocess.run([sys.executable, "-m", "launchprof", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
        assert expected is None or proc.returncode == expected, (args[0], proc.stderr[-2000:])
        assert launchprof_entries(temp) == [], args[0]


class _WorkerGone(Exception):
    pass


@pytest.mark.parametrize("ranks", [False, True], ids=["one-gpu", "ranks"])
def test_a_worker_that_never_returns_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ranks: bool) -> None:
    """Ctrl-C while the worker starts, or a launcher that cannot be spawned: the run folder
    that no result names is removed, not left for nobody to find."""
    from launchprof.commands import analyze, analyze_ranks
    from launchprof.commands.analyze import AnalyzeOptions

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def gone(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise _WorkerGone()

    monkeypatch.setattr(analyze_ranks if ranks else analyze, "run_ranks" if ranks else "run_worker", gone)
    options = AnalyzeOptions(script=ROOT / "sample_models" / "decode_loop.py", target="step", nproc_per_node=2 if ranks else None)
    console = Console(file=open(os.devnull, "w"))  # noqa: SIM115 - closed with the test
    with pytest.raises(_WorkerGone):
        if ranks:
            analyze_ranks.measure_ranks(options, console, False)
        else:
            analyze.measure(options, console)
    console.file.close()
    assert launchprof_entries(temp) == []


def test_the_suite_runs_in_a_temp_folder_of_pytest(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What launchprof keeps on purpose (a failed run's log, a crash's traceback) lands where
    pytest prunes it, not in the shared temp folder."""
    base = tmp_path_factory.getbasetemp().resolve()
    assert Path(tempfile.gettempdir()).resolve().is_relative_to(base)
    assert Path(os.environ["TMPDIR"]).resolve().is_relative_to(base)
