"""The plain reader of ``launchprof lint``'s command line gives what typer gives, or steps aside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import launchprof.commands.lint as lint_command
from launchprof import cli
from launchprof.commands import plain_argv

ROOT = Path(__file__).resolve().parents[1]

PLAIN = [
    ["lint", "a.py", "--all"],
    ["lint", "a.py", "b", "--all", "-f", "json", "-o", "out.json"],
    ["lint", "--target", "pkg.mod:step", "a.py"],
    ["lint", "-t", "step", "a.py", "--fail-on", "warning", "--strict", "--github", "-q"],
    ["lint", "src", "--format=sarif", "--output=x.sarif", "-f", "json", "-o", "y.json", "-f", "text"],
    ["lint", "src", "--exclude", "tests/*", "--exclude", "*_pb2.py", "--project-root", "proj"],
    ["lint", "src", "--project-root", "proj", "--all", "--quiet"],
    ["lint", "src", "--target="],
]
TYPER_ONLY = [
    ["lint"],
    ["lint", "--help"],
    ["lint", "-h"],
    ["lint", "a.py", "--nope"],
    ["lint", "a.py", "--all=1"],
    ["lint", "a.py", "-fjson"],
    ["lint", "a.py", "-qt", "step"],
    ["lint", "a.py", "--target", "a", "--target", "b"],
    ["lint", "a.py", "--target"],
    ["lint", "a.py", "--target", "--all"],
    ["lint", "--", "a.py"],
    ["lint", "-"],
    ["analyze", "s.py"],
    ["--version"],
    [],
]


def _options_from(monkeypatch, read) -> lint_command.LintOptions | None:
    """The LintOptions cli.lint builds when ``read`` runs it (None when it did not run)."""
    seen: list[lint_command.LintOptions] = []
    monkeypatch.setattr(lint_command, "run", lambda options: seen.append(options) or 0)
    read()
    return seen[0] if seen else None


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_command_line_gives_what_typer_gives(argv, monkeypatch):
    by_typer = _options_from(monkeypatch, lambda: cli.app(argv, standalone_mode=False))
    codes: list[int | None] = []
    plainly = _options_from(monkeypatch, lambda: codes.append(plain_argv.call_plainly(cli.app, argv)))
    assert by_typer is not None and codes == [0]
    assert plainly == by_typer


@pytest.mark.parametrize("argv", TYPER_ONLY, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_is_left_to_typer(argv, monkeypatch):
    plainly = _options_from(monkeypatch, lambda: plain_argv.call_plainly(cli.app, argv))
    assert plainly is None


def test_every_lint_parameter_is_understood():
    """A lint option added to cli.py with a kind this reader does not know would send every
    lint run back through typer's slower parser: this says so at once."""
    plan = plain_argv._plan(cli.app, "lint")
    assert plan is not None
    names = {p.name for p in plan[1]}
    assert {"paths", "target", "all_functions", "formats", "outputs", "exclude", "quiet"} <= names


def test_a_plain_lint_run_does_not_build_typer_adapters(tmp_path):
    """The point of the plain reader: typer's per-parameter pydantic adapters are never built."""
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    return x.item()\n")
    code = (
        "import sys\n"
        "from launchprof.cli import main\n"
        f"sys.argv = ['launchprof', 'lint', {str(src)!r}, '--all', '-f', 'json', '-o', {str(tmp_path / 'r.json')!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "assert code == 0, code\n"
        "assert 'typer._adapters' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.json").is_file()


def test_usage_errors_and_exit_codes_are_the_same_both_ways(tmp_path):
    """A plain command line that fails (unknown format, missing file, --fail-on tripped)
    still prints one `launchprof: error:` line and exits with the documented code."""
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    return x.item()\n")
    cases = [
        (["lint", str(src), "--all", "-f", "nope"], 2),
        (["lint", str(tmp_path / "missing.py"), "--all"], 2),
        (["lint", str(src), "--all", "--fail-on", "error"], 1),
        (["lint", str(src), "--all", "--target", "f"], 2),
    ]
    for argv, expected in cases:
        proc = subprocess.run([sys.executable, "-m", "launchprof", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == expected, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr
        if expected == 2:
            assert proc.stderr.startswith("launchprof: error:"), proc.stderr
