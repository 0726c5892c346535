"""Which files named on ``launchprof lint``'s command line are linted, through the real CLI.

A path that is not Python but happens to parse (``notes.txt`` holding ``x = 1``) must not
pass as "no hazards": it is a usage error, one line, exit 2, in every output format.
Scripts without a suffix are linted when their first line is a python shebang; folders
keep their ``*.py`` walk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.lint.named import has_python_shebang

ROOT = Path(__file__).resolve().parent.parent
# A hazard lint finds in any Python file it reads: `.item()` on a tensor argument.
STEP = "import torch\n\n\ndef step(x: torch.Tensor):\n    return x.sum().item()\n"
NOT_PYTHON = "is not a Python file (lint reads *.py files, and scripts whose first line is a #!...python shebang)"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "launchprof", "lint", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def hazards(cwd: Path, *args: str) -> list[tuple[str, int, str]]:
    """The (file, line, kind) of each hazard lint reports for ``args``, from its JSON report."""
    done = cli(cwd, *args, "--all", "-f", "json")
    assert done.returncode == 0, done.stderr
    return [(h["file"], h["line"], h["kind"]) for h in json.loads(done.stdout)["hazards"]]


def assert_not_python(done: subprocess.CompletedProcess[str], name: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"launchprof: error: {name} {NOT_PYTHON}"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("notes.txt", STEP),  # parses, and even holds a hazard: still not linted
        ("data.json", '{"a": [1, 2], "b": "c"}\n'),  # a Python literal
        ("README", "x = 1\n"),
        ("deploy", "#!/bin/bash\nexit\n"),  # a shebang, but not python's
        ("run.sh", "#!/usr/bin/env bash\n# python3 would be called below\nexit\n"),
    ],
)
def test_a_named_file_that_is_not_python_exits_2_with_one_line(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    compile(text, name, "exec")  # each one parses as Python: lint would have passed it
    assert_not_python(cli(tmp_path, name, "--all"), name)


@pytest.mark.parametrize(
    "args",
    [
        ["-f", "json"],
        ["-f", "sarif"],
        ["-f", "junit"],
        ["-f", "md"],
        ["-o", "out.sarif"],
        ["-o", "out.xml", "-o", "out.json", "-o", "out.html"],
        ["--github"],
        ["-q"],
        ["--fail-on", "error"],
        ["--target", "step"],
    ],
)
def test_every_format_and_option_gives_the_same_error_and_writes_no_report(tmp_path, args):
    (tmp_path / "notes.txt").write_text(STEP)
    assert_not_python(cli(tmp_path, "notes.txt", *([] if "--target" in args else ["--all"]), *args), "notes.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_one_non_python_file_among_good_ones_is_still_an_error(tmp_path):
    (tmp_path / "step.py").write_text(STEP)
    (tmp_path / "notes.txt").write_text("x = 1\n")
    assert_not_python(cli(tmp_path, "step.py", "notes.txt", "--all"), "notes.txt")


def test_a_script_with_a_python_shebang_is_linted(tmp_path):
    for name, shebang in [("train", "#!/usr/bin/env python3"), ("serve.cmd", "#!/opt/conda/bin/python3.12 -u")]:
        (tmp_path / name).write_text(f"{shebang}\n{STEP}")
        assert hazards(tmp_path, name) == [(name, 6, "hidden-sync")]


def test_a_py_file_is_linted_as_before(tmp_path):
    (tmp_path / "step.py").write_text(STEP)
    assert hazards(tmp_path, "step.py") == [("step.py", 5, "hidden-sync")]


def test_a_pyw_file_is_python_source_too(tmp_path):
    (tmp_path / "gui.pyw").write_text(STEP)
    assert hazards(tmp_path, "gui.pyw") == [("gui.pyw", 5, "hidden-sync")]


def test_a_symlink_to_a_py_file_is_linted(tmp_path):
    (tmp_path / "step.py").write_text(STEP)
    (tmp_path / "step").symlink_to("step.py")
    assert hazards(tmp_path, "step") == [("step.py", 5, "hidden-sync")]


def test_a_dangling_symlink_still_says_why_it_cannot_be_read(tmp_path):
    (tmp_path / "gone").symlink_to("nowhere")
    done = cli(tmp_path, "gone", "--all")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["launchprof: error: gone: cannot read: a dangling symlink"]


def test_a_folder_still_lints_only_its_py_files(tmp_path):
    """Folders keep their walk: a .txt (or a shebang script) inside one is skipped, not an error."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "step.py").write_text(STEP)
    (src / "notes.txt").write_text(STEP)
    (src / "train").write_text(f"#!/usr/bin/env python3\n{STEP}")
    assert hazards(tmp_path, "src") == [("step.py", 5, "hidden-sync")]  # relative to the root: src
    done = cli(tmp_path, "src", "--all")
    assert done.returncode == 0 and "1 file(s)" in done.stdout


@pytest.mark.parametrize(
    ("line", "python"),
    [
        (b"#!/usr/bin/env python3\n", True),
        (b"#!/usr/bin/python\r\n", True),
        (b"#! /usr/local/bin/python3.13t\n", True),
        (b"#!/usr/bin/env -S python3 -X dev\n", True),
        (b"#!/usr/bin/pypy3\n", True),
        (b"#!python\n", True),
        (b"#!/bin/sh\n", False),
        (b"#!/usr/bin/env VAR=1 python3\n", True),
        (b"#!/usr/bin/env node  # not python\n", False),
        (b"#!/bin/sh python3\n", False),
        (b"#!/usr/bin/env -S uv run python\n", False),
        (b"#!/usr/bin/env mypython-wrapper\n", False),
        (b"# python3\n", False),
        (b"import os\n", False),
        (b"", False),
    ],
)
def test_python_shebangs(line, python):
    assert has_python_shebang(line) is python
