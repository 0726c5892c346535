"""``launchprof report SESSION.json``: re-render a saved session, refuse bad ones with exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.render import RenderOptions, renderer_for

runner = CliRunner()


@pytest.fixture
def text_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the terminal text report instead of drawing it: its renderer has its own tests."""
    calls: list[str] = []
    monkeypatch.setattr("launchprof.commands.emit.print_text", lambda report, *a, **k: calls.append(report.verdict))
    return calls


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The report's project folder: it must exist, as --project-root is checked."""
    folder = tmp_path / "llm-decode"
    folder.mkdir()
    return folder


@pytest.fixture
def session(tmp_path: Path, project: Path) -> Path:
    path = tmp_path / "decode.report.json"
    path.write_text(reports.graphs_help(project).to_json(), encoding="utf-8")
    return path


def _report(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["report", *args], env={"GITHUB_ACTIONS": "", **(env or {})})


def test_several_format_output_pairs(session: Path, project: Path, tmp_path: Path, text_calls: list[str]) -> None:
    md, sarif = tmp_path / "a.md", tmp_path / "a.sarif"
    result = _report(str(session), "-f", "md", "-o", str(md), "-f", "sarif", "-o", str(sarif), "--project-root", str(project))
    assert result.exit_code == 0, result.output
    options = RenderOptions(project_root=project)
    assert md.read_text(encoding="utf-8") == renderer_for("md", options).render(reports.graphs_help(project))
    assert json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"][0]["ruleId"] == "frozen-scalar"
    assert text_calls == ["graphs-help"]  # nothing went to stdout, so the terminal gets the text report


def test_format_guessed_from_extension(session: Path, tmp_path: Path, text_calls: list[str]) -> None:
    html, xml, sarif = tmp_path / "r.html", tmp_path / "r.xml", tmp_path / "r.sarif.json"
    result = _report(str(session), "-o", str(html), "-o", str(xml), "-o", str(sarif))
    assert result.exit_code == 0, result.output
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert ET.fromstring(xml.read_text(encoding="utf-8")).tag == "testsuites"
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_format_to_stdout(session: Path, project: Path) -> None:
    result = _report(str(session), "-f", "md", "--project-root", str(project))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## launchprof analyze: `step` in `decode.py`")


def test_text_to_stdout(session: Path) -> None:
    pytest.importorskip("launchprof.render.console")
    result = _report(str(session), "-f", "text")
    assert result.exit_code == 0, result.output
    assert "graphs-help" in result.stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (lambda r: r.to_json()[: len(r.to_json()) // 2], "truncated"),
        (lambda r: r.to_json().replace('"schema_version": 3', '"schema_version": 99', 1), "schema_version 99"),
        (lambda r: json.dumps({"hello": "world"}), "schema_version"),
        (lambda r: "[1, 2]", "not a launchprof report"),
    ],
    ids=["truncated", "newer-schema", "foreign", "not-an-object"],
)
def test_bad_session_is_one_line_and_exit_2(tmp_path: Path, content, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.json"
    path.write_text(content(reports.graphs_help()), encoding="utf-8")
    result = _report(str(path), "-f", "md")
    assert result.exit_code == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.output


def test_a_python_script_is_named_as_one_with_the_command_that_runs_it(tmp_path: Path) -> None:
    """A sample script opens with a docstring, which JSON reads as a string: it is a script,
    not a truncated report."""
    script = Path(__file__).resolve().parent.parent / "sample_models" / "decode_loop.py"
    shebang = tmp_path / "train"
    shebang.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    for path in (script, shebang):
        result = _report(str(path))
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert result.stderr.strip() == (
            f"launchprof: error: {path} is a Python script, not a report or run file: `launchprof analyze {path}` runs scripts"
        )
    result = runner.invoke(app, ["compare", str(script), str(script)], env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 2 and "is a Python script, not a report or run file" in result.stderr


def test_missing_session_and_bad_format(session: Path, tmp_path: Path) -> None:
    result = _report(str(tmp_path / "nope.json"))
    assert result.exit_code == 2 and "not found" in result.stderr
    result = _report(str(session), "-f", "pdf")
    assert result.exit_code == 2 and "unknown format 'pdf'" in result.stderr
    result = _report(str(session), "-o", str(tmp_path / "r.docx"))
    assert result.exit_code == 2 and "cannot guess the format" in result.stderr


@pytest.mark.parametrize("how", ["flag", "env"])
def test_github_annotations(session: Path, project: Path, how: str) -> None:
    args = [str(session), "-f", "json", "--project-root", str(project)] + (["--github"] if how == "flag" else [])
    result = _report(*args, env={"GITHUB_ACTIONS": "true"} if how == "env" else None)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == "graphs-help"  # annotations never corrupt stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("::")]
    assert lines[0].startswith("::warning file=decode.py,line=42,title=launchprof frozen-scalar::")
    assert len(lines) == 3


@pytest.mark.parametrize("name", sorted(reports.recorded_reports()))
def test_recorded_sessions_rerender(name: str, tmp_path: Path, text_calls: list[str]) -> None:
    source = reports.DATA / name
    outputs = [tmp_path / f"r.{ext}" for ext in ("md", "sarif", "xml", "html", "json")]
    result = _report(str(source), *[arg for p in outputs for arg in ("-o", str(p))])
    assert result.exit_code == 0, result.output
    assert json.loads(outputs[-1].read_text(encoding="utf-8")) == json.loads(reports.recorded_reports()[name].to_json())
