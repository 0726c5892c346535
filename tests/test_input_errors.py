"""Mistakes in the paths a user names, through the real CLI: each is exit 2 and one line
that says what the path is (launchprof/fileio/input_files.py), never a crash or "not found".

Permission tests need permissions that are enforced. Run as a user they are; run as root
(CI containers, the GPU machines) the launchprof process is started without the
capabilities that let root ignore them (``setpriv --bounding-set``), so the same code
paths run either way. A probe proves the denial really happens, or the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
REPORT = DATA / "decode_loop.report.json"  # a recorded report (schema version 1)
PROFILE = DATA / "crossover_h200.json"  # a recorded device profile
RUN = DATA / "runs" / "batch_reduce.lprun"
SCRIPT = ROOT / "sample_models" / "decode_loop.py"
REGULAR = "is not a regular file (a pipe or device)"


def invoke(*args: str | Path):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, [*map(str, args)], env={"GITHUB_ACTIONS": ""})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def one_error(result) -> str:  # type: ignore[no-untyped-def]
    """The single error line of a usage error (exit 2)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("launchprof: error: ") and "internal error" not in lines[0]
    return lines[0]


# --- FIFOs and devices ----------------------------------------------------------------------


@pytest.fixture(params=["fifo", "dev-null"])
def special(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "dev-null":
        if not os.path.exists("/dev/null"):
            pytest.skip("no /dev/null")
        return Path("/dev/null")
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (("report", "{}"), "give a run file (.lprun) or a JSON report"),
        (("compare", "{}", REPORT), "give a run file (.lprun) or a JSON report"),
        (("compare", REPORT, "{}"), "give a run file (.lprun) or a JSON report"),
        (("lint", "{}", "--all"), "give Python files or folders to lint"),
        (("report", REPORT, "--profile", "{}"), "give a device profile"),
        (("analyze", SCRIPT, "--target", "step", "--profile", "{}"), "give a device profile"),
        (("analyze", "{}"), "give the Python script to run"),
    ],
    ids=["report", "compare-base", "compare-new", "lint", "report-profile", "analyze-profile", "analyze-script"],
)
def test_a_pipe_or_device_is_named_as_such_everywhere(special: Path, args: tuple, wanted: str) -> None:
    line = one_error(invoke(*(special if a == "{}" else a for a in args)))
    assert f"{special} {REGULAR}: {wanted}" in line
    assert "not found" not in line and "no such file" not in line


# --- a file of the other kind -----------------------------------------------------------------


@pytest.fixture
def lint_report(tmp_path: Path) -> Path:
    """A current (schema 3) report, as lint writes it."""
    out = tmp_path / "lint.json"
    assert invoke("lint", DATA / "lint" / "train_step.py", "-f", "json", "-o", out).exit_code == 0
    return out


def test_a_report_given_as_device_profile(lint_report: Path) -> None:
    for report in (lint_report, REPORT):  # the current schema and an old one
        line = one_error(invoke("report", report, "--profile", report))
        assert f"{report} is a launchprof report, not a device profile" in line
        assert "schema_version" not in line and "Field required" not in line


def test_a_report_given_to_analyze_as_device_profile(lint_report: Path) -> None:
    line = one_error(invoke("analyze", SCRIPT, "--target", "step", "--profile", lint_report))
    assert f"{lint_report} is a launchprof report, not a device profile" in line


def test_a_run_file_given_as_device_profile(tmp_path: Path) -> None:
    renamed = tmp_path / "profile.json"  # known by its content, not by its name
    shutil.copy(RUN, renamed)
    for run in (RUN, renamed):
        line = one_error(invoke("report", REPORT, "--profile", run))
        assert f"{run} is a launchprof run file, not a device profile" in line


def test_a_device_profile_given_as_report() -> None:
    for args in (("report", PROFILE), ("compare", PROFILE, REPORT), ("compare", REPORT, PROFILE)):
        line = one_error(invoke(*args))
        assert f"{PROFILE} is a launchprof device profile, not a report" in line
        assert "--profile" in line and "Field required" not in line


def test_a_missing_schema_version_reads_naturally(tmp_path: Path) -> None:
    report = json.loads(REPORT.read_text())
    del report["schema_version"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    line = one_error(invoke("report", path))
    assert line.endswith(f"{path}: not a launchprof report: it has no schema_version"), line
    profile = json.loads(PROFILE.read_text())
    del profile["schema_version"]
    path.write_text(json.dumps(profile))
    line = one_error(invoke("report", REPORT, "--profile", path))
    assert line.endswith("not a launchprof device profile: it has no schema_version"), line


# --- -o naming a folder --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [("report", REPORT), ("compare", REPORT, REPORT), ("lint", DATA / "lint" / "train_step.py"), ("analyze", SCRIPT, "--target", "step")],
    ids=["report", "compare", "lint", "analyze"],
)
@pytest.mark.parametrize("with_format", [False, True], ids=["no-f", "f-json"])
def test_output_folder_is_the_same_message_with_or_without_f(tmp_path: Path, command: tuple, with_format: bool) -> None:
    fmt = ("-f", "json") if with_format else ()
    line = one_error(invoke(*command, *fmt, "-o", tmp_path))
    assert line == f"launchprof: error: output path {tmp_path} is a directory"


# --- permissions -----------------------------------------------------------------------------


def _without_root_powers() -> list[str] | None:
    """The command prefix that makes permissions count: none for a user; for root, setpriv
    dropping the capabilities that read and search anything. None when there is no way."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return None if setpriv is None else [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture
def denied(tmp_path: Path) -> Iterator[tuple[Callable[[Path], None], Callable[..., subprocess.CompletedProcess[str]]]]:
    """``(deny, lp)``: ``deny(path)`` takes every permission from ``path``; ``lp(*args)`` runs
    launchprof in a process for which that denial holds. Permissions are restored after."""
    prefix = _without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions would not be enforced")
    taken: list[Path] = []

    def deny(path: Path) -> None:
        path.chmod(0)
        taken.append(path)

    probe = tmp_path / "probe"
    probe.mkdir()
    deny(probe)
    check = subprocess.run([*prefix, sys.executable, "-c", "import os, sys; os.listdir(sys.argv[1])", str(probe)], capture_output=True)
    if check.returncode == 0:
        probe.chmod(0o700)
        pytest.skip("permissions are not enforced here, even without root's capabilities")

    def lp(*args: str | Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": ""}
        cmd = [*prefix, sys.executable, "-m", "launchprof", *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)

    yield deny, lp
    for path in taken:
        path.chmod(0o700)


def proc_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "internal error" not in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _tree(tmp_path: Path) -> Path:
    """A project (``pyproject.toml`` at the top) with a module in a folder."""
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "proj" / "pkg" / "a.py").write_text("def f(x):\n    return x\n")
    return tmp_path / "proj"


def test_linting_an_unreadable_folder_is_one_line(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    deny, lp = denied
    pkg = _tree(tmp_path) / "pkg"
    deny(pkg)
    assert proc_error(lp("lint", pkg, "--all")) == f"launchprof: error: {pkg}: cannot read: Permission denied"
    # a file inside it is refused as an unreadable file is
    assert proc_error(lp("lint", pkg / "a.py", "--all")) == f"launchprof: error: {pkg / 'a.py'}: cannot read: Permission denied"


def test_linting_an_unreadable_folder_outside_any_project(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    deny, lp = denied
    lone = tmp_path / "lone"  # no marker above it: the project root search looks into it
    lone.mkdir()
    (lone / "a.py").write_text("x = 1\n")
    deny(lone)
    assert proc_error(lp("lint", lone, "--all")) == f"launchprof: error: {lone}: cannot read: Permission denied"


def test_an_unreadable_subfolder_is_noted_like_an_unreadable_file(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    deny, lp = denied
    proj = _tree(tmp_path)
    (proj / "pkg" / "sub").mkdir()
    (proj / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    (proj / "pkg" / "c.py").write_text("z = 3\n")
    deny(proj / "pkg" / "sub")
    deny(proj / "pkg" / "c.py")
    out = tmp_path / "r.json"
    proc = lp("lint", proj / "pkg", "--all", "-o", out)
    assert proc.returncode == 0, proc.stderr
    notes = json.loads(out.read_text())["notes"]
    assert f"1 file(s) not read: {proj / 'pkg' / 'c.py'}: cannot read: Permission denied" in notes
    assert f"1 folder(s) not read (the files in them were not checked): {proj / 'pkg' / 'sub'}: cannot read: Permission denied" in notes
    assert "in 1 file(s)" in notes[0]  # a.py only


def test_a_folder_with_only_an_unreadable_subfolder_says_so(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    deny, lp = denied
    top = tmp_path / "top"
    (top / "sub").mkdir(parents=True)
    (top / "sub" / "b.py").write_text("y = 2\n")
    deny(top / "sub")
    line = proc_error(lp("lint", top, "--all"))
    assert line == f"launchprof: error: no Python files to lint in {top} (1 folder(s) not read: {top / 'sub'}: cannot read: Permission denied)"


def test_inputs_and_outputs_in_an_unreadable_folder(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    deny, lp = denied
    closed = tmp_path / "closed"
    closed.mkdir()
    shutil.copy(REPORT, closed / "r.json")
    deny(closed)
    assert proc_error(lp("report", closed / "r.json")) == f"launchprof: error: cannot read {closed / 'r.json'}: Permission denied"
    assert proc_error(lp("report", REPORT, "--profile", closed / "p.json")).endswith(f"cannot read {closed / 'p.json'}: Permission denied")
    for fmt in ((), ("-f", "json")):
        line = proc_error(lp("report", REPORT, *fmt, "-o", closed / "out.json"))
        assert line == f"launchprof: error: cannot write {closed / 'out.json'}: Permission denied"


def test_path_options_into_an_unreadable_folder_are_one_line(tmp_path: Path, denied) -> None:  # type: ignore[no-untyped-def]
    """Path's is_file/is_dir/exists raise PermissionError where os.path's answer False: each
    of these crashed with exit 70 (an internal error) before."""
    deny, lp = denied
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    run = ROOT / "tests" / "data" / "runs" / "decode_loop.lprun"
    closed = tmp_path / "closed"
    closed.mkdir()
    shutil.copy(run, closed / "r.lprun")
    deny(closed)
    for args in (
        ("report", closed / "r.lprun", "--save-trace", tmp_path / "traces"),
        ("report", run, "--save-trace", closed / "traces"),
        ("analyze", script, "--run-out", closed / "x.lprun"),
        ("analyze", script, "--save-trace", closed / "t"),
        ("analyze", script, "--project-root", closed / "p"),
        ("lint", script, "--all", "--project-root", closed / "p"),
    ):
        proc = lp(*args)
        assert "internal error" not in proc.stderr, (args, proc.stderr)
        proc_error(proc)


def test_a_pipe_met_in_a_folder_walk_is_noted_not_read(tmp_path: Path) -> None:
    """``mkfifo pkg/x.py``: lint's walk must not open it (reading a pipe blocks for ever)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    os.mkfifo(pkg / "x.py")
    (pkg / "ok.py").write_text("def f(x):\n    return x.item()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": ""}
    proc = subprocess.run([sys.executable, "-m", "launchprof", "lint", "pkg", "--all"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "x.py: cannot read: not a regular file (a pipe or device)" in " ".join(proc.stdout.split())
