"""The console script's entry point (launchprof/entry.py): Ctrl-C during the CLI's imports
is one line and exit 130; otherwise the CLI runs as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from launchprof.entry import INTERRUPTED
from launchprof.errors import ExitCode

ROOT = Path(__file__).resolve().parent.parent
# Ctrl-C arrives while launchprof.cli is being imported: its finder raises it.
CUT_IMPORT = """
import sys
class CutHere:
    def find_spec(self, name, path=None, target=None):
        if name == "launchprof.cli":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, CutHere())
from launchprof.entry import main
main()
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_ctrl_c_while_importing_is_one_line_and_130():
    assert INTERRUPTED == int(ExitCode.INTERRUPTED)
    proc = run("-c", CUT_IMPORT)
    assert proc.returncode == 130
    assert proc.stderr == "launchprof: error: interrupted\n"


def test_the_console_script_is_the_entry_point():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"launchprof": "launchprof.entry:main"}


def test_ctrl_c_while_typer_parses_is_reported(monkeypatch, capsys):
    """typer turns a Ctrl-C in its own parsing into a bare exit 130; main() says it."""
    import pytest

    from launchprof import cli

    monkeypatch.setattr(cli, "INTERRUPT_SAID", [])
    monkeypatch.setattr(sys, "argv", ["launchprof", "report", "x.lprun"])
    monkeypatch.setattr(cli, "app", lambda standalone_mode: int(ExitCode.INTERRUPTED))
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 130 and capsys.readouterr().err.strip() == "launchprof: error: interrupted"


def test_the_entry_point_runs_the_cli():
    proc = run("-m", "launchprof", "--version")
    assert proc.returncode == 0 and proc.stdout.strip().startswith("launchprof ")
