"""lint's plain report (launchprof.lint.report) must stay the report model's twin.

``launchprof lint`` renders text and JSON from plain dataclasses so that it never imports
pydantic (docs/lint-speed.md). These tests check that the twin has the models' fields in
the models' order, that it writes the very JSON and text the model writes, and that the
command really leaves pydantic unloaded for ``-f json -o FILE``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.commands import emit
from launchprof.commands.emit import capped
from launchprof.commands.lint import LintOptions, build_report
from launchprof.failon import fail_reason
from launchprof.lint import lint
from launchprof.lint.report import SCHEMA_VERSION, LintHazard, LintMachine, LintReport
from launchprof.models import SCHEMA_VERSION as MODEL_SCHEMA_VERSION
from launchprof.models import Hazard, Machine, Report
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.github import annotations
from tests.test_lint_speed import MIXED

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"


def _default(f: dataclasses.Field) -> object:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


@pytest.mark.parametrize(("plain", "model"), [(LintReport, Report), (LintHazard, Hazard), (LintMachine, Machine)])
def test_the_plain_report_has_the_models_fields_in_their_order(plain: type, model: type) -> None:
    plain_fields = dataclasses.fields(plain)
    model_fields = dataclasses.fields(model)
    assert [f.name for f in plain_fields] == [f.name for f in model_fields]
    for p, m in zip(plain_fields, model_fields):
        if _default(m) is not dataclasses.MISSING:
            assert _default(p) == _default(m), p.name


def test_the_schema_version_is_the_models() -> None:
    assert SCHEMA_VERSION == MODEL_SCHEMA_VERSION


def _options(paths: list[Path], all_functions: bool) -> LintOptions:
    return LintOptions(tuple(paths), None, all_functions, (), (), "never", None, False)


def _reports(tmp_path: Path) -> list[LintReport]:
    """Reports with findings of every kind lint has: the samples, under --all and --strict."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(3):
        (pkg / f"m{i}.py").write_text(MIXED.format(i=i))
    reports = []
    for paths, all_functions, strict in (([SAMPLES], True, True), ([SAMPLES], False, False), ([pkg], True, False)):
        result = lint(paths, all_functions=all_functions, project_root=paths[0], strict=strict)
        reports.append(build_report(result, _options(paths, all_functions), 0.25))
    assert all(isinstance(h, LintHazard) for r in reports for h in r.hazards)
    assert sum(len(r.hazards) for r in reports) > 50
    return reports


def test_the_plain_report_writes_the_models_json_text_and_fail_reasons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emit, "TERMINAL_FINDINGS", 5)  # the terminal's copy of a long report
    for report in _reports(tmp_path):
        model = report.to_model()
        assert isinstance(model, Report)
        assert report.to_json() == model.to_json()
        assert json.loads(report.to_json())["hazards"][0]["fingerprint"] == model.hazards[0].fingerprint
        for fmt in ("json", "text"):
            for options in (RenderOptions(project_root=SAMPLES), RenderOptions(ascii=True, width=80)):
                assert renderer_for(fmt, options).render(report) == renderer_for(fmt, options).render(model)
        small = capped(report, tmp_path / "all.json")
        assert len(small.hazards) == min(5, len(report.hazards))
        assert renderer_for("text").render(small) == renderer_for("text").render(capped(model, tmp_path / "all.json"))
        assert list(annotations(report.hazards, SAMPLES)) == list(annotations(model.hazards, SAMPLES))
        for rule in ("never", "error", "warning"):
            assert fail_reason(report, rule) == fail_reason(model, rule)


def test_a_hazard_fingerprint_follows_the_models_rule() -> None:
    """From the code when known, else from the message; a given one is kept without code."""
    base = {"kind": "hidden-sync", "severity": "error", "message": "m", "file": "a.py", "line": 3, "hint": "h"}
    for extra in ({"details": {"code": "x.item()  # why"}}, {"details": {}}, {"details": {}, "fingerprint": "abcd"}):
        plain, model = LintHazard(**base, **extra), Hazard(**base, **extra)
        assert plain.fingerprint == model.fingerprint
        assert plain.severity is model.severity
    assert LintHazard(**base, details={}, fingerprint="abcd").fingerprint == "abcd"


def _imported(tmp_path: Path, *args: str) -> set[str]:
    """Modules a ``launchprof lint`` run imports (``-X importtime``), in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-X", "importtime", "-m", "launchprof", "lint", *args]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(re.findall(r"^import time:.*\|\s*(\S+)\s*$", proc.stderr, re.MULTILINE))


@pytest.mark.parametrize("files", [3, 70])  # one process, and worker processes (64 files or more)
def test_lint_json_to_a_file_never_imports_pydantic(tmp_path: Path, files: int) -> None:
    """rich still loads: the text report goes to the terminal beside the file."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(files):
        (pkg / f"m{i}.py").write_text(MIXED.format(i=i))
    modules = _imported(tmp_path, "pkg", "--all", "-f", "json", "-o", "out.json")
    assert "launchprof.lint.report" in modules and "json" in modules  # the parse of -X importtime works
    heavy = sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core") or m in ("launchprof.models", "launchprof.session"))
    assert not heavy, heavy
    written = json.loads((tmp_path / "out.json").read_text())
    assert Report.from_dict(written).to_json() == json.dumps(written, indent=2, ensure_ascii=False)
    assert len(written["hazards"]) >= files
    # The same check sees the models when a format needs them.
    assert "launchprof.models" in _imported(tmp_path, "pkg", "--all", "-f", "md", "-o", "out.md")
