"""``--project-root`` is checked the same way by every command that takes it (one check,
launchprof/commands/checks.py): a missing path and a file are each one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "runs" / "decode_loop.lprun"
SCRIPT = ROOT / "sample_models" / "decode_loop.py"
COMMANDS = {
    "report": ["report", str(RUN), "-f", "json", "-o", "{out}"],
    "lint": ["lint", str(SCRIPT), "--all", "-f", "json", "-o", "{out}"],
    "analyze": ["analyze", str(SCRIPT), "--target", "step", "-o", "{out}"],
}


def invoke(tmp_path: Path, command: str, root: Path):  # type: ignore[no-untyped-def]
    args = [a.replace("{out}", str(tmp_path / "out.json")) for a in COMMANDS[command]]
    result = CliRunner().invoke(app, [*args, "--project-root", str(root)], env={"GITHUB_ACTIONS": ""})
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, (result.exit_code, result.stderr)
    assert not (tmp_path / "out.json").exists()  # refused before anything was written
    return lines[0]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_folder_is_refused(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nonexistent"
    assert invoke(tmp_path, command, missing) == f"launchprof: error: --project-root {missing}: no such folder"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_is_said_to_be_a_file_not_missing(tmp_path: Path, command: str) -> None:
    file = tmp_path / "pyproject.toml"
    file.write_text("[project]\n")
    line = invoke(tmp_path, command, file)
    assert f"--project-root {file} is a file, not a folder" in line and "no such" not in line


def test_a_linked_loop_named_to_lint_is_one_line(tmp_path: Path) -> None:
    """A path whose links loop is the user's to mend: exit 2 and one line, not an internal error."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    result = CliRunner().invoke(app, ["lint", str(tmp_path / "a"), "--all"], env={"GITHUB_ACTIONS": ""})
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, (result.exit_code, result.stderr)
    assert "internal error" not in lines[0] and "symbolic links" in lines[0]
