"""``-o`` never destroys a file the user needs: a command's input (also through a symlink or
a hard link), an existing Python file, a read-only file (also for root), or a file named
twice. Each is exit 2 with one line, before any input is read, and nothing is written."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

import launchprof.commands.compare as compare_cmd
import launchprof.commands.lint as lint_cmd
import launchprof.commands.report as report_cmd
from launchprof.cli import app
from launchprof.fileio.output_files import write_output

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
REPORT = DATA / "decode_loop.report.json"
RUN = DATA / "runs" / "decode_loop.lprun"
SCRIPT = "import torch\n\n\ndef step(x):\n    return x.item()\n"


def invoke(*args: str | Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*map(str, args)], env={"GITHUB_ACTIONS": ""})


def refused(result, *words: str) -> str:  # type: ignore[no-untyped-def]
    """The one error line of an exit-2 result, which names each of ``words``."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("launchprof: error:"), result.stderr
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def nothing_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal comes up front: no command gets as far as reading or linting its inputs."""

    def read(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an input was read before -o was checked")

    monkeypatch.setattr(report_cmd, "open_saved", read)
    monkeypatch.setattr(compare_cmd, "load_any", read)
    monkeypatch.setattr(lint_cmd, "lint", read)


def _copies(tmp_path: Path) -> tuple[Path, Path, Path]:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    run = tmp_path / "run.lprun"
    shutil.copyfile(RUN, run)
    base = tmp_path / "base.json"
    shutil.copyfile(REPORT, base)
    return script, run, base


@pytest.mark.parametrize("spelling", ["same", "another-path", "symlink", "hardlink"])
def test_an_output_that_is_an_input_is_refused(tmp_path: Path, spelling: str, nothing_read: None) -> None:
    script, run, base = _copies(tmp_path)
    (tmp_path / "sub").mkdir()
    before = {p: p.read_bytes() for p in (script, run, base)}

    def spelled(path: Path) -> Path:
        if spelling == "another-path":
            return path.parent / "sub" / ".." / path.name
        if spelling in ("symlink", "hardlink"):
            other = path.with_name(f"other-{path.stem}.json")
            if not os.path.lexists(other):
                other.symlink_to(path) if spelling == "symlink" else os.link(path, other)
            return other
        return path

    lint_out = spelled(script)
    lint_format = "md" if lint_out.suffix == ".py" else "json"  # -f md -o script.py: the reported case
    cases = [
        ("lint", script, "--all", "-f", lint_format, "-o", lint_out),
        ("report", run, "-f", "json", "-o", spelled(run)),
        ("compare", base, REPORT, "-f", "json", "-o", spelled(base)),
        ("compare", REPORT, run, "-f", "json", "-o", spelled(run)),
    ]
    for args in cases:
        refused(invoke(*args), "is the input")
    assert {p: p.read_bytes() for p in before} == before


def test_analyze_refuses_its_script_as_an_output_before_running(tmp_path: Path) -> None:
    script, _run, _base = _copies(tmp_path)
    refused(invoke("analyze", script, "-f", "json", "-o", script), "script.py")
    refused(invoke("analyze", script, "--run-out", script), "--run-out", "input")
    report = tmp_path / "r.json"
    refused(invoke("analyze", script, "-o", report, "--run-out", tmp_path / "." / "r.json"), "same file")
    assert script.read_text() == SCRIPT and not report.exists()


def test_an_existing_python_file_is_never_replaced(tmp_path: Path, nothing_read: None) -> None:
    """Whatever the format, and also when -o is a link to it; nor is a report written under a new .py name."""
    other = tmp_path / "other.py"
    other.write_text("x = 1\n")
    link = tmp_path / "link.json"
    link.symlink_to(other)
    for args in (["-f", "json", "-o", other], ["-f", "text", "-o", other], ["-o", link]):
        refused(invoke("report", REPORT, *args), "Python file")
    assert other.read_text() == "x = 1\n" and link.is_symlink()
    refused(invoke("lint", ROOT / "sample_models", "--all", "-f", "md", "-o", other), "Python file")
    assert other.read_text() == "x = 1\n"
    new = tmp_path / "new.py"
    refused(invoke("report", REPORT, "-f", "json", "-o", new), "named as Python source")
    assert not new.exists()
    tool = tmp_path / "tool"  # a script known by its shebang, and a Windows .pyw
    tool.write_text("#!/usr/bin/env python3\nprint(1)\n")
    gui = tmp_path / "gui.pyw"
    gui.write_text("x = 1\n")
    for script in (tool, gui):
        refused(invoke("report", REPORT, "-f", "json", "-o", script), "Python file")
    assert tool.read_text().startswith("#!") and gui.read_text() == "x = 1\n"


def test_a_refusal_names_its_reason_without_f(tmp_path: Path, nothing_read: None) -> None:
    """Without -f the format of `-o run.lprun` cannot be guessed; the refusal still says why."""
    copy = tmp_path / "copy.lprun"
    copy.write_bytes(RUN.read_bytes())
    refused(invoke("report", copy, "-o", copy), "is the input")
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    refused(invoke("report", REPORT, "-o", script), "Python file")


def test_a_read_only_file_is_refused_also_for_root(tmp_path: Path, nothing_read: None) -> None:
    """The mode decides: root may write anything, and the rename would replace it."""
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{}\n")
    baseline.chmod(0o444)
    link = tmp_path / "via-link.json"
    link.symlink_to(baseline)
    for path in (baseline, link):
        refused(invoke("report", REPORT, "-o", path), "not writable", "0444")
        refused(invoke("compare", REPORT, REPORT, "-f", "json", "-o", path), "not writable")
    assert baseline.read_text() == "{}\n" and stat.S_IMODE(baseline.stat().st_mode) == 0o444


def test_the_writer_itself_does_not_replace_a_read_only_file(tmp_path: Path) -> None:
    """Outputs not checked up front (a rank's report, a trace) are refused where they are written."""
    path = tmp_path / "r.json"
    path.write_text("old")
    path.chmod(0o400)
    with pytest.raises(PermissionError):
        write_output(path, "new")
    assert path.read_text() == "old"
    path.chmod(0o600)
    write_output(path, "new")
    assert path.read_text() == "new"


@pytest.mark.parametrize("second", ["a.json", "absolute", "sub/../a.json", "link.json"])
def test_the_same_output_twice_is_refused(tmp_path: Path, second: str, nothing_read: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    Path("link.json").symlink_to(tmp_path / "a.json")  # dangling: a.json is not written yet
    second = str(tmp_path / "a.json") if second == "absolute" else second
    refused(invoke("report", REPORT, "-o", "a.json", "-o", second), "same file")
    refused(invoke("lint", ROOT / "sample_models", "--all", "-o", "a.json", "-o", second), "same file")
    assert not (tmp_path / "a.json").exists()


def test_format_aliases_are_documented() -> None:
    """txt, markdown and xml are accepted for -f: the help and the README say so."""
    for command in ("report", "lint", "analyze"):
        text = " ".join(invoke(command, "--help").stdout.split())
        assert "txt for text" in text and "markdown for md" in text and "xml for junit" in text, text
    text = " ".join(invoke("compare", "--help").stdout.split())
    assert "txt for text" in text and "markdown for md" in text
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`txt` for `text`, `markdown` for `md`, `xml` for `junit`" in readme



def test_an_alias_this_command_does_not_write_is_named_as_typed() -> None:
    """`compare -f xml` names xml (and what it stands for), not a format the user never typed."""
    line = refused(invoke("compare", RUN, RUN, "-f", "xml"), "'xml'", "junit")
    assert "unknown format 'junit'" not in line


def test_a_closed_standard_output_is_one_line_and_exit_2() -> None:
    """Started with stdout closed (`>&-`), a command has nowhere to print: one error line on
    stderr, exit 2, no crash file."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "launchprof", "report", "tests/data/runs/decode_loop.lprun"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=__import__('pathlib').Path(__file__).resolve().parent.parent,
                          preexec_fn=lambda: __import__("os").close(1))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "launchprof: error: cannot write to standard output: it is closed"
