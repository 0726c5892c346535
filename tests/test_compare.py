"""``launchprof compare``: deltas as data, ``--fail-on`` rules, and the command's exit codes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reports
from launchprof.analysis.comparison import METRICS, compare, evaluate, parse_rule
from launchprof.errors import UsageError
from launchprof.render.markdown import md_text
from launchprof.cli import app
from launchprof.model.core import Report

runner = CliRunner()


def _eager(report: Report, **changes) -> Report:  # type: ignore[no-untyped-def]
    return dataclasses.replace(report, eager=dataclasses.replace(report.eager, **changes))


def _speedup(report: Report, median: float) -> Report:
    return dataclasses.replace(report, speedup=dataclasses.replace(report.speedup, median=median))


def _trips(rule: str, base: Report, new: Report) -> list[str]:
    return evaluate([parse_rule(rule)], compare(base, new))


def test_identical_reports_have_no_deltas() -> None:
    result = compare(reports.graphs_help(), reports.graphs_help())
    assert [d.metric for d in result.deltas] == list(METRICS)
    assert all(d.change == 0 and d.worse is False for d in result.deltas)
    assert result.hazards_added == result.hazards_removed == result.machine_differences == []
    frame = result.to_frame()
    assert frame.loc["kernels_per_step", "base"] == 212 and frame.loc["speedup", "relative"] == 0


@pytest.mark.parametrize(("kernels", "trips"), [(230, True), (220, False), (150, False)])
def test_relative_increase_rule(kernels: int, trips: bool) -> None:
    base = reports.graphs_help()
    assert bool(_trips("kernels_per_step:+5%", base, _eager(base, kernels_per_step=kernels))) is trips


@pytest.mark.parametrize(("speedup", "trips"), [(2.0, True), (2.2, False), (3.0, False)])
def test_relative_decrease_rule(speedup: float, trips: bool) -> None:
    base = reports.graphs_help()  # 2.3156
    tripped = _trips("speedup:-10%", base, _speedup(base, speedup))
    assert bool(tripped) is trips
    if trips:
        assert tripped == ["speedup:-10%: speedup 2.3156 -> 2 (-13.6%)"]


@pytest.mark.parametrize(("idle", "trips"), [(0.68, True), (0.65, False), (0.40, False)])
def test_absolute_rule_for_fractions(idle: float, trips: bool) -> None:
    base = reports.graphs_help()  # 0.619
    assert bool(_trips("gpu_idle_fraction:+0.05", base, _eager(base, gpu_idle_fraction=idle))) is trips


def test_metric_lost_in_new_trips_but_missing_in_base_does_not() -> None:
    helps, broken = reports.graphs_help(), reports.not_capturable()
    assert _trips("speedup:-10%", helps, broken) == ["speedup:-10%: speedup was 2.3156 and is no longer measured"]
    assert _trips("speedup:-10%", broken, helps) == []


def test_new_hazards_identified_by_kind_file_and_line() -> None:
    base = reports.graphs_help()
    moved = dataclasses.replace(base, hazards=[dataclasses.replace(base.hazards[0], line=43)] + base.hazards[1:])
    result = compare(base, moved)
    assert [(k.kind, k.file, k.line) for k in result.hazards_added] == [("frozen-scalar", "decode.py", 43)]
    assert [(k.kind, k.file, k.line) for k in result.hazards_removed] == [("frozen-scalar", "decode.py", 42)]
    assert _trips("new-hazards", base, moved) == ["new-hazards: 1 new hazard(s): frozen-scalar at decode.py:43"]
    assert _trips("new-hazards", moved, base) != []  # the reverse adds line 42
    # The same checkout measured in another CI workspace is the same hazards.
    assert _trips("new-hazards", base, reports.graphs_help(Path("/runner/_work/llm"))) == []
    assert _trips("new-hazards", moved, dataclasses.replace(moved, hazards=moved.hazards[1:])) == []


@pytest.mark.parametrize(
    ("base", "new", "trips"),
    [
        ("graphs-help", "marginal", True),
        ("marginal", "graphs-help", False),
        ("graphs-help", "not-capturable", True),
        ("graphs-help", "eager-only", True),  # the measurement was lost: cannot be shown not worse
        ("eager-only", "not-capturable", False),
        ("graphs-dont-help", "graphs-dont-help", False),
    ],
)
def test_verdict_rule(base: str, new: str, trips: bool) -> None:
    r = reports.graphs_help()
    assert bool(_trips("verdict", dataclasses.replace(r, verdict=base), dataclasses.replace(r, verdict=new))) is trips


@pytest.mark.parametrize("rule", ["speedup:10%", "speed:+5%", "speedup:+x%", "kernels_per_step", "new_hazards", "speedup:+5%%"])
def test_bad_rule_names_itself_and_the_accepted_forms(rule: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_rule(rule)
    assert repr(rule) in str(err.value)
    assert "METRIC:+N%" in str(err.value) and "new-hazards" in str(err.value) and "kernels_per_step" in str(err.value)


def test_machine_differences() -> None:
    base = reports.graphs_help()
    other = dataclasses.replace(base, machine=dataclasses.replace(base.machine, gpu="NVIDIA H100 80GB HBM3", torch="2.10.0"))
    result = compare(base, other)
    assert result.machine_differences == ["gpu: NVIDIA H200 -> NVIDIA H100 80GB HBM3", "torch: 2.11.0+cu130 -> 2.10.0"]
    assert result.warnings == ["different GPU: NVIDIA H200 -> NVIDIA H100 80GB HBM3", "different torch: 2.11.0+cu130 -> 2.10.0"]
    # unknown is not different: a report without a GPU name does not warn
    assert compare(base, dataclasses.replace(base, machine=dataclasses.replace(base.machine, gpu=None))).warnings == []


# --- the command -----------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, report: Report) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(report.to_json(), encoding="utf-8")
    return str(path)


def test_command_exit_1_with_one_line_per_tripped_rule(tmp_path: Path) -> None:
    base = reports.graphs_help()
    new = _speedup(_eager(base, kernels_per_step=260), 1.5)
    args = ["compare", _write(tmp_path, "base", base), _write(tmp_path, "new", new)]
    rules = ["--fail-on", "kernels_per_step:+5%", "--fail-on", "speedup:-10%", "--fail-on", "new-hazards"]
    result = runner.invoke(app, args + rules)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2
    assert "kernels_per_step:+5%: kernels_per_step 212 -> 260 (+22.6%)" in lines[0]
    assert "speedup:-10%" in lines[1]
    assert "Kernels per step" in result.stdout and "+22.6%" in result.stdout


def test_command_exit_0_and_json_output(tmp_path: Path) -> None:
    base = _write(tmp_path, "base", reports.graphs_help())
    result = runner.invoke(app, ["compare", base, base, "--fail-on", "new-hazards", "--fail-on", "verdict", "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["metrics"]["speedup"] == {
        "base": 2.3156, "new": 2.3156, "change": 0.0, "relative": 0.0, "worse": False, "significance": None,
        "bases": {"base": "profiled", "new": "profiled"}, "compared": True,
    }
    assert data["metrics"]["eager_step_us"]["significance"]["tested"] is False  # built reports keep no samples
    assert "could not be tested" in data["significance_note"] and data["warnings"] == []
    assert data["tripped"] == [] and data["verdict"] == {"base": "graphs-help", "new": "graphs-help", "worse": False}


def test_command_markdown_file_and_machine_warning(tmp_path: Path) -> None:
    base = reports.graphs_help()
    new = dataclasses.replace(reports.not_capturable(), machine=dataclasses.replace(base.machine, driver="575.51.03"))
    out = tmp_path / "compare.md"
    result = runner.invoke(app, ["compare", _write(tmp_path, "base", base), _write(tmp_path, "new", new), "-o", str(out), "--fail-on", "verdict"])
    assert result.exit_code == 1
    assert "warning: different driver: 580.95.05 -> 575.51.03: timings may not be comparable" in result.stdout
    assert "warning: different script: decode.py -> train.py" in result.stdout
    md = out.read_text(encoding="utf-8")
    for warning in ("different script: decode.py -> train.py", "different target: step -> train_step", "different driver: 580.95.05 -> 575.51.03"):
        assert f"> - {md_text(warning)}\n" in md + "\n"
    assert "| Verdict | graphs-help | not-capturable | worse ❌ |  |" in md
    assert "**Hazards added: 2**" in md and "`hidden-sync` at `train.py:17`" in md
    assert "verdict got worse" in md


def test_command_bad_rule_and_bad_format_exit_2(tmp_path: Path) -> None:
    base = _write(tmp_path, "base", reports.graphs_help())
    result = runner.invoke(app, ["compare", base, base, "--fail-on", "speedup:10%"])
    assert result.exit_code == 2 and "'speedup:10%'" in result.stderr
    result = runner.invoke(app, ["compare", base, base, "-f", "sarif"])
    assert result.exit_code == 2 and "unknown format 'sarif'" in result.stderr
    result = runner.invoke(app, ["compare", base, str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "not found" in result.stderr


@pytest.mark.parametrize("name", sorted(reports.recorded_reports()))
def test_recorded_session_compared_with_itself(name: str) -> None:
    path = str(reports.DATA / name)
    rules = [arg for rule in ["new-hazards", "verdict", *(f"{m}:+1%" for m in METRICS)] for arg in ("--fail-on", rule)]
    result = runner.invoke(app, ["compare", path, path, *rules])
    assert result.exit_code == 0, result.output


def test_one_function_named_by_its_decorator_or_by_target_is_the_same_target() -> None:
    """A run of `@launchprof.target update` against one of `--target update` compares one
    function: no warning. Another function still warns."""
    from launchprof.analysis.comparison import kind_warnings

    by_name = dataclasses.replace(reports.graphs_help(), target="update")
    decorated = dataclasses.replace(reports.graphs_help(), target="@launchprof.target update")
    assert not [w for w in kind_warnings(decorated, by_name) if "target" in w]
    other = dataclasses.replace(reports.graphs_help(), target="@launchprof.target step")
    assert "different target: @launchprof.target step -> update" in kind_warnings(other, by_name)
