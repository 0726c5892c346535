"""What the terminal says about itself: a path that is standard output is ``-o -`` (and a
reader that leaves early ends it quietly), any ``COLUMNS`` gives a readable report, a
locale that is not UTF-8 gets ASCII, and a path printed in a message is never broken."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
REPORT = DATA / "decode_loop.report.json"
RUN = DATA / "runs" / "decode_loop.lprun"
LOCALE = ("LC_ALL", "LC_CTYPE", "LANG", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONCOERCECLOCALE")


def _env(**extra: str) -> dict[str, str]:
    """This environment without its locale: ``LANG=C.UTF-8`` unless ``extra`` sets a locale variable."""
    env = {k: v for k, v in os.environ.items() if k not in LOCALE and k != "GITHUB_ACTIONS"}
    locale = {} if set(extra) & {"LC_ALL", "LC_CTYPE", "LANG"} else {"LANG": "C.UTF-8"}
    return {**env, "PYTHONPATH": str(ROOT), "COLUMNS": "80", **locale, **extra}


def lp(*args: str | Path, stdout: int | None = subprocess.PIPE, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "launchprof", *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, env=_env(**env), cwd=ROOT, timeout=300
    )


# --- -o PATH that is standard output ------------------------------------------------------


@pytest.mark.parametrize("path", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_a_path_that_is_stdout_gets_the_one_report(path: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    proc = lp("report", REPORT, "-f", "json", "-o", path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "graphs-help"  # the whole of stdout: no text report after it
    assert b"wrote" not in proc.stderr


def test_the_file_stdout_is_redirected_to_is_stdout(tmp_path: Path) -> None:
    """`-o out.json > out.json`: the JSON goes through the stream into the file the shell
    opened (not renamed over it, which sent the text report to a deleted file)."""
    out = tmp_path / "out.json"
    with open(out, "wb") as fh:
        inode = os.fstat(fh.fileno()).st_ino
        proc = lp("report", REPORT, "-f", "json", "-o", out, stdout=fh.fileno())
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_ino == inode and b"wrote" not in proc.stderr
    assert json.loads(out.read_text())["verdict"] == "graphs-help"


def test_two_outputs_to_stdout_through_paths_are_refused() -> None:
    proc = lp("report", REPORT, "-f", "json", "-f", "md", "-o", "/dev/stdout", "-o", "-")
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"only one can go there" in proc.stderr and len(proc.stderr.splitlines()) == 1


def _reader_gone(*args: str | Path) -> tuple[int, bytes]:
    """Run launchprof with a stdout whose reader left before anything was written."""
    proc = subprocess.Popen([sys.executable, "-m", "launchprof", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=300), err


@pytest.mark.parametrize("out", ["-", "/dev/stdout"])
def test_a_reader_that_left_keeps_the_exit_code(out: str, tmp_path: Path) -> None:
    rc, err = _reader_gone("report", REPORT, "-f", "json", "-o", out)
    assert (rc, err) == (0, b"")
    script = tmp_path / "s.py"
    script.write_text("import torch\n\n\ndef f(x):\n    return x.item()\n")
    rc, err = _reader_gone("lint", script, "--all", "-f", "json", "-o", out, "--fail-on", "error")
    assert rc == 1 and b"Broken pipe" not in err and b"internal error" not in err, err


def test_quiet_keeps_a_report_sent_to_a_stdout_path() -> None:
    for out in ("-", "/dev/stdout"):
        proc = lp("report", REPORT, "-q", "-f", "json", "-o", out)
        assert proc.returncode == 0 and proc.stderr == b""
        assert json.loads(proc.stdout)["verdict"] == "graphs-help"


def test_crossover_refuses_a_stdout_path_like_a_dash() -> None:
    proc = lp("crossover", "-o", "/dev/stdout")
    assert proc.returncode == 2 and b"standard output" in proc.stderr and len(proc.stderr.splitlines()) == 1


# --- COLUMNS --------------------------------------------------------------------------------


COMMANDS = {
    "report": ("report", str(REPORT)),
    "lint": ("lint", str(ROOT / "sample_models" / "decode_loop.py"), "--all"),
    "compare": ("compare", str(REPORT), str(DATA / "long_kernels.report.json")),
}


def _steady(text: str) -> str:
    """``text`` without what changes from one run to the next (lint's time, the report's date)."""
    return re.sub(r"\d+\.\d+ s\b|\d{4}-\d\d-\d\dT[\d:+]+", "#", text)


@pytest.mark.parametrize("command", COMMANDS)
def test_any_columns_value_gives_a_readable_report(command: str) -> None:
    """Under 20 columns, or not a number, is 80: rich printed nothing at 0 and a letter a line at 1."""
    runner = CliRunner()
    at_80 = runner.invoke(app, list(COMMANDS[command]), env={"COLUMNS": "80", "GITHUB_ACTIONS": ""})
    assert at_80.exit_code == 0 and len(at_80.stdout.splitlines()) > 5
    for columns in ("0", "1", "19", "-3", "wide"):
        result = runner.invoke(app, list(COMMANDS[command]), env={"COLUMNS": columns, "GITHUB_ACTIONS": ""})
        assert result.exit_code == 0, result.output
        assert _steady(result.stdout) == _steady(at_80.stdout), columns


def test_an_error_line_shows_at_zero_columns(tmp_path: Path) -> None:
    proc = lp("report", tmp_path / "missing.lprun", COLUMNS="0")
    assert proc.returncode == 2 and proc.stderr.startswith(b"launchprof: error:") and b"missing.lprun" in proc.stderr


# --- paths in messages -----------------------------------------------------------------------


def test_paths_in_messages_are_never_broken(tmp_path: Path) -> None:
    """A path longer than the terminal stays on one line: the "more findings" note, the wrote-line, errors."""
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "and-another-one-below-it"
    deep.mkdir(parents=True)
    body = ["import torch", ""] + [f"def f{i}(x):\n    return x.item()\n" for i in range(60)]
    script = deep / "many.py"
    script.write_text("\n".join(body))
    out = deep / "findings.json"
    proc = lp("lint", script, "--all", "-o", out, COLUMNS="40")
    assert proc.returncode == 0, proc.stderr
    stdout, stderr = proc.stdout.decode().splitlines(), proc.stderr.decode().splitlines()
    assert any(f"more finding(s) in {out}" in line for line in stdout), proc.stdout.decode()
    assert f"wrote json report to {out}" in stderr
    read_only = deep / "read-only-report.json"
    read_only.write_text("{}")
    read_only.chmod(0o444)
    proc = lp("report", REPORT, "-o", read_only, COLUMNS="40")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and str(read_only) in proc.stderr.decode()


# --- locale ------------------------------------------------------------------------------------


def _on_a_terminal(*args: str | Path, **env: str) -> str:
    """What launchprof prints on a pseudo-terminal under ``env``."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "launchprof", *map(str, args)], stdout=slave, stderr=subprocess.DEVNULL, env=_env(**env), cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        try:
            chunk = os.read(master, 65536) if ready else b""
        except OSError:  # EIO: the terminal's last writer is gone
            chunk = b""
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode("utf-8", errors="replace"))  # colours off


ASCII_LOCALES = [
    {"LANG": "C"},
    {"LC_ALL": "C"},
    {"LANG": "POSIX"},
    {"LC_CTYPE": "C"},
    {"LANG": "en_US.ISO-8859-1"},
    {"LC_ALL": "", "LANG": "C"},
    {"LC_CTYPE": "C", "LANG": "C.UTF-8"},
]
# LANG="" is no variable set at all: the stream's encoding decides, as before.
UTF8_LOCALES = [{"LANG": "C.UTF-8"}, {"LC_ALL": "C.UTF-8", "LANG": "C"}, {"LC_CTYPE": "", "LANG": "en_US.UTF-8"}, {"LANG": ""}]


@pytest.mark.parametrize("locale", ASCII_LOCALES + UTF8_LOCALES, ids=lambda env: " ".join(f"{k}={v}" for k, v in env.items()))
def test_a_locale_that_is_not_utf8_gets_ascii_on_a_terminal(locale: dict[str, str]) -> None:
    text = _on_a_terminal("report", REPORT, **locale)
    if locale in ASCII_LOCALES:
        assert text.isascii() and "+- launchprof analyze -" in text, text[:200]
    else:
        assert "╭─ launchprof analyze" in text, text[:200]


def test_a_locale_that_is_not_utf8_gets_ascii_in_a_pipe_too() -> None:
    proc = lp("report", REPORT, LANG="C")
    assert proc.returncode == 0 and proc.stdout.isascii() and proc.stdout.startswith(b"+- launchprof analyze -")
    proc = lp("report", REPORT, "-f", "json", LANG="C")  # the data stays whole, escaped
    assert proc.stdout.isascii() and json.loads(proc.stdout) == json.loads(lp("report", REPORT, "-f", "json").stdout)
