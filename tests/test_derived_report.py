"""A report whose eager figures were derived from the graph and CUDA events: the control-flow
hazard from op digests, labels that say how each figure was obtained, and ``compare``, which
never compares figures of different bases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.analysis import analyse
from launchprof.analysis.comparison import compare, evaluate, parse_rule
from launchprof.cli import app
from launchprof.model.core import Report
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.number_rows import key_numbers
from launchprof.render.words import format as fmt
from launchprof.run import load_run
from tests.stripped import DATA, OpSequence, Plan, strip_traces, with_evidence

runner = CliRunner()
DIFFERING = [OpSequence(0, 12, "a1"), OpSequence(1, 14, "b2"), OpSequence(2, 12, "a1")]
SAME = [OpSequence(i, 12, "a1") for i in range(3)]


def _control_flow(report: Report) -> list[object]:
    return [h for h in report.hazards if h.kind == "data-dependent-control-flow"]


def test_differing_op_sequences_raise_the_control_flow_hazard_without_a_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    run = load_run(DATA / "runs" / "data_dependent.lprun")
    assert not _control_flow(analyse(strip_traces(run)))  # no trace and no op sequences: nothing to read
    with with_evidence(monkeypatch, [Plan(False)], DIFFERING):
        [found] = _control_flow(analyse(strip_traces(run)))
    assert found.code == "op-sequence-differs" and found.params["op_counts"] == [12, 14]
    assert "the sequence of PyTorch ops differs between calls (12 vs 14 ops)" in found.message
    traced = _control_flow(analyse(run))
    assert len(traced) == 1 and found.line == traced[0].line  # the same branch, found either way
    with with_evidence(monkeypatch, [Plan(False)], SAME):
        assert not _control_flow(analyse(strip_traces(run)))


def test_a_trace_and_differing_op_sequences_give_one_hazard(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker profiles the eager calls after the plan when their op sequences differ:
    the kernel sequences then decide, and the op digests add no second hazard."""
    run = load_run(DATA / "runs" / "data_dependent.lprun")
    with with_evidence(monkeypatch, [Plan(False), Plan(True, "ops-differ", "after-plan")], DIFFERING):
        found = _control_flow(analyse(run))
    assert [h.code for h in found] == ["kernel-sequence-differs"]


def test_varying_shapes_explain_differing_op_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    run = strip_traces(load_run(DATA / "runs" / "dynamic_shapes.lprun"))
    with with_evidence(monkeypatch, [Plan(False)], DIFFERING):
        assert not _control_flow(analyse(run))


@pytest.fixture(scope="module")
def gpt2() -> tuple[Report, Report]:
    """hf_gpt2_step as profiled (89 traced kernels) and without traces (108 kernel nodes)."""
    run = load_run(DATA / "runs" / "hf_gpt2_step.lprun")
    return analyse(run), analyse(strip_traces(run))


def test_labels_say_how_each_figure_was_obtained(gpt2: tuple[Report, Report]) -> None:
    profiled, derived = gpt2
    rows = dict(key_numbers(derived))
    assert rows["Kernels per replay (graph nodes)"] == str(derived.replay.node_types["kernel"]) != str(profiled.eager.kernels_per_step)
    assert rows["GPU idle (eager, from CUDA events)"] != "n/a" and "Launch gap (eager, from CUDA events, mean)" in rows
    assert not any("profiled" in label or label == "Kernels per eager step" for label in rows)
    assert {"Kernels per eager step", "GPU idle (eager, profiled)", "Launch gap (eager, profiled, median)"} <= set(dict(key_numbers(profiled)))
    text = renderer_for("text", RenderOptions(width=200, explain=True)).render(derived)
    assert f"{derived.eager.kernels_per_step} kernels per replay (the captured graph's kernel nodes)" in text and "kernels per eager step" not in text
    assert "of the eager step (from CUDA events)" in text and "profiled eager step" not in text
    data = json.loads(renderer_for("json", RenderOptions()).render(derived))
    assert data["eager"]["basis"]["kernels_per_step"] == "graph-nodes" and data["eager"]["basis"]["gpu_idle_fraction"] == "events"
    assert json.loads(renderer_for("json", RenderOptions()).render(profiled))["eager"]["basis"] == {}


def _write(tmp_path: Path, name: str, report: Report) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(report.to_json(), encoding="utf-8")
    return str(path)


RULES = ["kernels_per_step:+5%", "kernels_per_step:-5%", "gpu_idle_fraction:+0.01", "gpu_idle_fraction:-0.01", "launch_gap_us:+1%", "launch_gap_us:-1%"]


def test_figures_of_different_bases_are_never_compared(gpt2: tuple[Report, Report]) -> None:
    profiled, derived = gpt2
    for base, new in ((profiled, derived), (derived, profiled)):
        result = compare(base, new)
        kernels = result.delta("kernels_per_step")
        assert not kernels.comparable and kernels.change is None and kernels.worse is None
        assert {d.metric for d in result.not_compared} == {"kernels_per_step", "gpu_idle_fraction", "launch_gap_us"}
        assert evaluate([parse_rule(r) for r in RULES], result) == []
    same = compare(derived, derived)
    assert same.not_compared == [] and same.delta("kernels_per_step").change == 0


def test_compare_command_shows_and_warns_but_does_not_trip(tmp_path: Path, gpt2: tuple[Report, Report]) -> None:
    profiled, derived = gpt2
    args = ["compare", _write(tmp_path, "base", profiled), _write(tmp_path, "new", derived)]
    rules = [x for r in RULES for x in ("--fail-on", r)]
    result = runner.invoke(app, [*args, *rules])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # the terminal wraps the table's cells and the warnings
    grown = fmt.percent(derived.eager.kernels_per_step / profiled.eager.kernels_per_step - 1, sign=True)
    assert grown not in out and f"{profiled.eager.kernels_per_step}" in out and f"{derived.eager.kernels_per_step}" in out
    assert "warning: kernels_per_step not compared: the base report has it profiled, the new one graph nodes" in out
    data = json.loads(runner.invoke(app, [*args, *rules, "-f", "json"]).stdout)
    kernels = data["metrics"]["kernels_per_step"]
    assert kernels["bases"] == {"base": "profiled", "new": "graph-nodes"} and kernels["compared"] is False and kernels["change"] is None
    assert data["metrics"]["gpu_idle_fraction"]["bases"]["new"] == "events" and data["tripped"] == []
    assert len(data["not_compared"]) == 3
    md = runner.invoke(app, [*args, "-f", "md"]).stdout
    k, idle = (profiled.eager.kernels_per_step, derived.eager.kernels_per_step), (profiled.eager.gpu_idle_fraction, derived.eager.gpu_idle_fraction)
    assert f"| Kernels per step | {k[0]} | {k[1]} | not compared: profiled vs graph-nodes |" in md
    assert f"| GPU idle fraction | {fmt.percent(idle[0])} | {fmt.percent(idle[1])} | not compared: profiled vs events |" in md
    assert "Figures obtained in different ways are not compared" in md


def test_two_derived_reports_compare_as_usual(tmp_path: Path, gpt2: tuple[Report, Report]) -> None:
    import dataclasses

    _, derived = gpt2
    kernels = derived.eager.kernels_per_step
    more = dataclasses.replace(derived, eager=dataclasses.replace(derived.eager, kernels_per_step=kernels + 12))
    result = runner.invoke(app, ["compare", _write(tmp_path, "a", derived), _write(tmp_path, "b", more), "--fail-on", "kernels_per_step:+5%"])
    assert result.exit_code == 1, result.output
    assert f"kernels_per_step {kernels} -> {kernels + 12}" in result.stderr
    md = runner.invoke(app, ["compare", _write(tmp_path, "a", derived), _write(tmp_path, "b", more), "-f", "md"]).stdout
    assert f"| Kernels per step (graph nodes) | {kernels} | {kernels + 12} | {fmt.percent(12 / kernels, sign=True)} ❌ |" in md
    assert "| Launch gap (CUDA events, mean) |" in md and "not compared" not in md
