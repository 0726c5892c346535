"""``launchprof lint`` through the CLI: exit codes, the JSON report, formats, suppression.

The fixture ``tests/data/lint/train_step.py`` is a realistic training step; each line
lint must report carries ``# finds: KIND``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app
from test_lint import marked_lines

DATA = Path(__file__).resolve().parent / "data" / "lint"
STEP = DATA / "train_step.py"


def invoke(*args: str | Path):
    result = CliRunner().invoke(app, ["lint", *map(str, args)])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def json_report(tmp_path: Path, *args: str | Path) -> dict:
    out = tmp_path / "out.json"
    result = invoke(*args, "-f", "json", "-o", out)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_json_report_of_the_fixture(tmp_path):
    report = json_report(tmp_path, STEP)
    assert report["mode"] == "lint"
    assert report["verdict"] == "static-only"
    assert report["schema_version"] == 3
    assert report["target"] == "train_step"
    assert report["script"] == str(STEP)
    assert report["machine"]["gpu"] is None and report["machine"]["torch"] is None
    assert report["eager"] is None and report["replay"] is None and report["speedup"] is None
    hazards = report["hazards"]
    assert {(h["line"], h["kind"]) for h in hazards} == marked_lines(STEP.read_text(), "finds:")
    for h in hazards:
        assert {"kind", "severity", "message", "file", "line", "hint"} <= set(h)
        assert h["file"] == "tests/data/lint/train_step.py"  # relative to the project root
        assert h["source"] == "static"
        assert h["details"]["function"] in {"train_step", "MLP.forward"}
    severities = {h["kind"]: h["severity"] for h in hazards}
    assert severities == {
        "hidden-sync": "error",
        "pageable-copy": "error",
        "unjoined-stream": "error",
        "data-dependent-control-flow": "error",
        "frozen-scalar": "warning",
        "rng-state": "warning",
    }


def test_suppressed_lines_are_left_out_and_counted(tmp_path):
    report = json_report(tmp_path, STEP)
    suppressed = [n for n, line in enumerate(STEP.read_text().splitlines(), 1) if "launchprof: ignore" in line]
    assert len(suppressed) == 2
    assert not {h["line"] for h in report["hazards"]} & set(suppressed)
    assert any("2 finding(s) suppressed" in note for note in report["notes"])


def test_exit_codes_for_fail_on(tmp_path):
    assert invoke(STEP).exit_code == 0  # --fail-on never is the default
    failed = invoke(STEP, "--fail-on", "error")
    assert failed.exit_code == 1
    assert "--fail-on error" in failed.stderr
    warnings_only = tmp_path / "warn.py"
    warnings_only.write_text("import launchprof\nimport numpy as np\n\n@launchprof.target\ndef step(x):\n    return x + np.random.rand()\n")
    assert invoke(warnings_only, "--fail-on", "error").exit_code == 0
    assert invoke(warnings_only, "--fail-on", "warning").exit_code == 1
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nimport launchprof\n\n@launchprof.target\ndef step(x: torch.Tensor):\n    return x * 2\n")
    assert invoke(clean, "--fail-on", "warning").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.py"], "no such file or folder: missing.py"),
        ([STEP, "--fail-on", "sometimes"], "unknown --fail-on 'sometimes'"),
        ([STEP, "--fail-on", "no-benefit"], "unknown --fail-on 'no-benefit'"),
        ([STEP, "--target", "nope"], "unknown target 'nope'"),
        ([STEP, "--target", "train_step", "--all"], "--target and --all"),
        ([STEP, "-f", "pdf"], "unknown format 'pdf'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_a_syntax_error_exits_2_naming_file_and_line(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("import torch\n\n\ndef step(x):\n    return (x +\n")
    result = invoke(bad)
    assert result.exit_code == 2
    assert f"{bad}:5: cannot parse" in result.stderr


def test_target_option_and_all(tmp_path):
    report = json_report(tmp_path, STEP, "--target", "accuracy")
    assert report["target"] == "accuracy" and report["hazards"] == []
    report = json_report(tmp_path, STEP, "--target", "MLP.forward")
    assert [(h["line"], h["kind"]) for h in report["hazards"]] == [(32, "hidden-sync")]
    report = json_report(tmp_path, DATA, "--all")
    assert report["target"] is None
    assert any("checked every function" in note for note in report["notes"])
    assert {h["line"] for h in report["hazards"]} >= {line for line, _ in marked_lines(STEP.read_text(), "finds:")}


def test_text_report_on_the_terminal():
    result = invoke(STEP)
    assert result.exit_code == 0
    assert "train_step.py:57" in result.stdout
    assert "hidden-sync" in result.stdout


def test_the_reports_state_the_counts_by_severity_and_say_when_nothing_was_found(tmp_path):
    counted = invoke(STEP).stdout
    assert "\n10 hazards: 7 errors, 3 warnings, 0 info\nnote: lint checked 1 target(s)" in counted  # last, before the notes
    md = tmp_path / "lint.md"
    assert invoke(STEP, "-o", md).exit_code == 0
    assert "Static check only (no GPU run): 10 hazards in the source (7 errors, 3 warnings, 0 info)." in md.read_text()
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\n\ndef step(x: torch.Tensor):\n    return x * 2\n")
    assert "╯\nNo hazards found.\nnote: lint checked every function (1) in 1 file(s)" in invoke(clean, "--all").stdout
    assert invoke(clean, "--all", "-o", md).exit_code == 0
    assert "Static check only (no GPU run): no hazards found in the source." in md.read_text()


@pytest.mark.parametrize("fmt", ["md", "sarif", "junit"])
def test_other_formats_are_written(tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    result = invoke(STEP, "-f", fmt, "-o", out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "hidden-sync" in text and "train_step.py" in text


def test_sarif_locates_each_finding(tmp_path):
    out = tmp_path / "lint.sarif"
    assert invoke(STEP, "-o", out, "--project-root", DATA).exit_code == 0
    sarif = json.loads(out.read_text())
    locations = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for run in sarif["runs"] for r in run["results"]
    }
    assert {(kind, line) for line, kind in marked_lines(STEP.read_text(), "finds:")} == locations


def test_github_annotations(tmp_path):
    result = invoke(STEP, "--github", "-f", "json", "-o", tmp_path / "o.json")
    assert result.exit_code == 0
    assert "::error file=" in result.stderr and ",line=57," in result.stderr  # annotations go to stderr
    assert "::warning file=" in result.stderr


PROJECT = DATA / "project"


def test_no_target_no_marker_no_all_is_a_usage_error(tmp_path):
    plain = tmp_path / "serve.py"
    plain.write_text("import torch\n\ndef step(x: torch.Tensor):\n    return x.item()\n")
    result = invoke(plain, "--fail-on", "error")
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "@launchprof.target" in lines[0] and "--target" in lines[0] and "--all" in lines[0]
    assert invoke(plain, "--all").exit_code == 0


def test_unknown_ignore_kinds_warn_with_file_and_line(tmp_path):
    src = tmp_path / "step.py"
    src.write_text(
        "import torch\nimport launchprof\n\n@launchprof.target\ndef step(x: torch.Tensor):\n"
        "    a = x.item()  # launchprof: ignore[no-such-kind, hidden-sync]\n"
        "    return a  # launchprof: ignore[hiden-sync]\n"
    )
    result = invoke(src)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        "launchprof: warning: step.py:6: unknown kind 'no-such-kind' in `# launchprof: ignore[...]`",
        "launchprof: warning: step.py:7: unknown kind 'hiden-sync' in `# launchprof: ignore[...]`",
    ]


def test_a_bad_file_in_a_folder_is_a_note_not_a_stop(tmp_path):
    (tmp_path / "good.py").write_text("import torch\n\ndef f(x: torch.Tensor):\n    return x.item()\n")
    (tmp_path / "newer.py").write_text("def f(x):\n    match x:\n        case [a, *b] if (y := a) ->:\n            pass\n")
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing.py")
    report = json_report(tmp_path, tmp_path, "--all")
    assert [(h["file"], h["line"]) for h in report["hazards"]] == [("good.py", 4)]
    note = next(n for n in report["notes"] if "not read" in n)
    assert "2 file(s) not read" in note and "newer.py:3: cannot parse" in note and "gone.py: cannot read: a dangling symlink" in note
    only_bad = invoke(tmp_path / "newer.py", "--all")
    assert only_bad.exit_code == 2 and "newer.py:3: cannot parse" in only_bad.stderr


def test_exclude_from_the_command_line_and_from_pyproject(tmp_path):
    report = json_report(tmp_path, PROJECT, "--all")  # generated/ (a broken file) is excluded by pyproject.toml
    assert not any("not read" in n for n in report["notes"])
    files = {h["file"] for h in report["hazards"]}
    assert "pkg/stats.py" in files and "train.py" in files
    report = json_report(tmp_path, PROJECT, "--all", "--exclude", "pkg/layers", "--exclude", "train.py")
    files = {h["file"] for h in report["hazards"]}
    assert files == {"pkg/stats.py", "pkg/models.py"}


def test_project_root_option(tmp_path):
    report = json_report(tmp_path, PROJECT / "train.py", "--target", "relative", "--project-root", PROJECT / "pkg")
    assert [h["file"] for h in report["hazards"]] == ["layers/util.py"]
    missing = invoke(PROJECT / "train.py", "--project-root", tmp_path / "nope")
    assert missing.exit_code == 2 and "no such folder" in missing.stderr


def test_the_footer_names_calls_that_were_not_followed(tmp_path):
    report = json_report(tmp_path, PROJECT / "train.py", "--target", "unresolved")
    note = next(n for n in report["notes"] if "not followed" in n)
    assert note.startswith("3 call(s) not followed") and "train.py:" in note
    strict = json_report(tmp_path, PROJECT / "train.py", "--target", "unresolved", "--strict")
    assert {h["kind"] for h in strict["hazards"]} == {"unresolved-call"}


def test_paths_given_relative_to_the_working_folder_are_reported_relative_to_the_root(tmp_path, monkeypatch):
    monkeypatch.chdir(PROJECT.parent.parent)  # tests/data: the project is two folders down from here
    report = json_report(tmp_path, Path("lint/project/train.py"), "--target", "unresolved")
    note = next(n for n in report["notes"] if "not followed" in n)
    assert "train.py:" in note and "lint/project/train.py" not in note
    report = json_report(tmp_path, Path("lint/project/train.py"), "--target", "helper")
    assert [h["file"] for h in report["hazards"]] == ["pkg/stats.py"]


def test_a_folder_with_nothing_to_lint_is_a_usage_error(tmp_path):
    """A mistyped or empty folder must not pass `--fail-on error` with nothing checked."""
    (tmp_path / "notes.txt").write_text("hello\n")
    result = invoke(tmp_path, "--all", "--fail-on", "error")
    assert result.exit_code == 2 and "no Python files to lint in" in result.output
    (tmp_path / "step.py").write_text("def step(x):\n    return x\n")
    assert invoke(tmp_path, "--all", "--fail-on", "error").exit_code == 0
    excluded = invoke(tmp_path, "--all", "--exclude", "*.py")
    assert excluded.exit_code == 2 and "every one is excluded" in excluded.output


def test_lint_and_analyze_word_a_bad_target_alike(tmp_path):
    """One wording for a malformed --target in both commands; an unknown one lists the names."""
    from typer.testing import CliRunner

    from launchprof.cli import app

    script = tmp_path / "s.py"
    script.write_text("def step(x):\n    return x\n\ndef main():\n    step(1)\n", encoding="utf-8")
    runner = CliRunner()
    bad_lint = runner.invoke(app, ["lint", str(script), "--target", "no such"])
    bad_analyze = runner.invoke(app, ["analyze", str(script), "--target", "no such"])
    assert bad_lint.exit_code == bad_analyze.exit_code == 2
    assert "is not a name" in bad_lint.output and "is not a name" in bad_analyze.output
    unknown = runner.invoke(app, ["lint", str(script), "--target", "zzz"])
    assert unknown.exit_code == 2 and "functions there: main, step" in unknown.output


def test_an_empty_target_is_a_usage_error_not_no_target(tmp_path):
    from typer.testing import CliRunner

    from launchprof.cli import app

    script = tmp_path / "s.py"
    script.write_text("def step(x):\n    return x\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["analyze", str(script), "--target", ""])
    assert result.exit_code == 2 and "--target '' names nothing" in result.output
