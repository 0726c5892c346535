"""lint's report is the report model itself (launchprof.model.core), written without pydantic.

``launchprof lint`` must never import pydantic (docs/lint-speed.md): the report models
are plain dataclasses, validated only where a report is read from a file. These tests
check that what lint writes as JSON validates as a report and loads back equal, and that
the command leaves pydantic unloaded whatever the format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.commands.lint import LintOptions, build_report
from launchprof.enums import Severity, Verdict
from launchprof.lint import lint
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report
from launchprof.render import renderer_for
from tests.test_lint_speed import MIXED

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"


def _options(paths: list[Path], all_functions: bool) -> LintOptions:
    return LintOptions(tuple(paths), None, all_functions, (), (), "never", None, False)


def _reports(tmp_path: Path) -> list[Report]:
    """Reports with findings of every kind lint has: the samples, under --all and --strict."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(3):
        (pkg / f"m{i}.py").write_text(MIXED.format(i=i))
    reports = []
    for paths, all_functions, strict in (([SAMPLES], True, True), ([SAMPLES], False, False), ([pkg], True, False)):
        result = lint(paths, all_functions=all_functions, project_root=paths[0], strict=strict)
        reports.append(build_report(result, _options(paths, all_functions), 0.25))
    assert sum(len(r.hazards) for r in reports) > 50
    return reports


def test_lint_json_validates_as_a_report_and_loads_back_equal(tmp_path: Path) -> None:
    for report in _reports(tmp_path):
        assert isinstance(report, Report) and all(isinstance(h, Hazard) for h in report.hazards)
        assert report.verdict is Verdict.STATIC_ONLY and {h.severity for h in report.hazards} <= set(Severity)
        written = renderer_for("json").render(report)
        again = Report.from_dict(json.loads(written))
        assert again == report
        assert renderer_for("json").render(again) == written


# Runs the CLI as ``python -m launchprof`` does and lists every module loaded by its exit
# (``-X importtime`` does not list the modules ``importlib.import_module`` loads, as
# ``renderer_for`` loads the renderers).
PROBE = """
import atexit, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["launchprof", *sys.argv[2:]]
runpy.run_module("launchprof", run_name="__main__", alter_sys=True)
"""


def _imported(tmp_path: Path, *args: str) -> set[str]:
    """Modules a ``launchprof lint`` run imports, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    listed = tmp_path / "modules.json"
    cmd = [sys.executable, "-c", PROBE, str(listed), "lint", *args]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(json.loads(listed.read_text()))


def _pydantic(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core"))


@pytest.mark.parametrize("files", [3, 70])  # one process, and worker processes (64 files or more)
def test_lint_json_to_a_file_never_imports_pydantic(tmp_path: Path, files: int) -> None:
    """rich still loads: the text report goes to the terminal beside the file."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(files):
        (pkg / f"m{i}.py").write_text(MIXED.format(i=i))
    modules = _imported(tmp_path, "pkg", "--all", "-f", "json", "-o", "out.json")
    assert "launchprof.model.core" in modules and "launchprof.render.json" in modules  # the probe sees the command's modules
    assert not _pydantic(modules)
    written = json.loads((tmp_path / "out.json").read_text())
    assert Report.from_dict(written).to_json() == json.dumps(written, indent=2, ensure_ascii=False)
    assert len(written["hazards"]) >= files


def test_no_lint_format_imports_pydantic(tmp_path: Path) -> None:
    args = [a for fmt in ("md", "sarif", "junit", "html") for a in ("-f", fmt, "-o", f"out.{fmt}")]
    modules = _imported(tmp_path, str(SAMPLES), "--all", *args)
    assert "launchprof.render.sarif" in modules and "launchprof.model.core" in modules
    assert not _pydantic(modules)
