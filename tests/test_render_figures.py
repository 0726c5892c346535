"""One definition per figure, the same in every format; the newer optional report fields.

The typed report models carry fields older reports lack (``prediction``,
``replay.setup_us``, ...); these tests set them on realistic reports and check that every
format reads them the same way.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

import reports
from launchprof.render import RenderOptions, figures, renderer_for
from launchprof.render.number_rows import key_numbers
from launchprof.render.junit import JUnitRenderer, lint_kinds
from launchprof.model.predicted import Prediction
from launchprof.model.core import Report
from launchprof.model.step_timing import Speedup, Stats, Validation

OPTIONS = RenderOptions(project_root=reports.ROOT, width=200)  # sentences stay on one line
EXPLAIN = dataclasses.replace(OPTIONS, explain=True)  # every figure, not the default few
TEXT_FORMATS = ("text", "md", "html", "junit")

def newer(report: Report, replay: dict[str, Any] | None = None, **fields: Any) -> Report:
    """``report`` with the newer model fields set (``replay.setup_us``, ``prediction``, ...)."""
    if replay is not None and report.replay is not None:
        fields["replay"] = dataclasses.replace(report.replay, **replay)
    return dataclasses.replace(report, **fields)


def render_all(report: Any) -> dict[str, str]:
    return {f: renderer_for(f, OPTIONS).render(report) for f in TEXT_FORMATS}


def test_marginal_interval_including_one_reads_no_measurable_gain() -> None:
    base = reports.graphs_help()
    straddles = dataclasses.replace(base, verdict="marginal", speedup=Speedup(1.03, 0.97, 1.08))
    above = dataclasses.replace(base, verdict="marginal", speedup=Speedup(1.05, 1.01, 1.08))
    for fmt_name, text in render_all(straddles).items():
        assert "no measurable gain" in text.lower(), fmt_name
        assert "help a little" not in text, fmt_name
    assert "no measurable gain" not in renderer_for("md", OPTIONS).render(above).lower()
    assert "no clear gain" in renderer_for("md", OPTIONS).render(above).lower()
    assert "help a little" not in renderer_for("md", OPTIONS).render(above)


def test_memory_held_for_no_gain_is_named() -> None:
    report = dataclasses.replace(reports.graphs_help(), verdict="graphs-dont-help", speedup=Speedup(0.86, 0.80, 0.92))
    report = newer(report, replay={"workspace_bytes": 32 * 2**20})
    for fmt_name, text in render_all(report).items():
        if fmt_name != "junit":
            assert "holds 46.0 MiB of GPU memory for no measurable gain (plus 32.0 MiB of one-time library workspace)" in text, fmt_name
    assert figures.memory_for_no_gain(reports.graphs_help()) is None


def test_payback_counts_setup_when_known_and_says_what_it_counts() -> None:
    old = reports.graphs_help()
    assert figures.payback_text(old) == "pays back instantiation after 1.9 replays"
    # A report with setup_us carries the payback the analysis computed from it (one definition).
    from launchprof.crossover.replay_model import breakeven_replays

    report = newer(old, replay={"setup_us": 10_470.6})  # (1843.2 - 796.0) µs saved per replay: 10 replays
    report = dataclasses.replace(report, breakeven_replays=breakeven_replays(10_470.6, report.eager.step_us.median, report.replay.step_us.median))
    assert figures.payback_text(report) == "pays back capture + warm-up + instantiate after 10.0 replays"
    md = renderer_for("md", EXPLAIN).render(report)
    assert "| Replays to pay back capture + warm-up + instantiate | 10.0 |" in md
    assert "| Setup (capture + warm-up + instantiate) | 10.47 ms |" in md
    slower = newer(dataclasses.replace(old, eager=dataclasses.replace(old.eager, step_us=Stats(700.0, 690.0, 710.0, 25))), replay={"setup_us": 5000.0})
    slower = dataclasses.replace(slower, breakeven_replays=breakeven_replays(5000.0, 700.0, slower.replay.step_us.median))
    assert figures.payback_text(slower) == "never pays back capture + warm-up + instantiate (replay is no faster)"


def test_gpu_idle_headline_and_table_agree() -> None:
    report = reports.recorded_reports()["decode_loop.report.json"]
    text = renderer_for("text", RenderOptions(width=100, explain=True)).render(report)
    assert "GPU idle 94.3% of the profiled eager step" in text
    assert "GPU idle (eager, profiled)" in text and text.count("94.3%") == 2
    assert "94%" not in text.replace("94.3%", "")


def test_extra_graph_nodes_are_named() -> None:
    long_kernels = reports.recorded_reports()["long_kernels.report.json"]
    assert figures.nodes_text(long_kernels) == "4 (2 kernels as in eager + 2 memsets)"
    base = reports.graphs_help()
    rng = dataclasses.replace(base, replay=dataclasses.replace(base.replay, graph_nodes=216, node_types={"kernel": 214, "memset": 1, "memcpy": 1}))
    # Graph-only kernels are named the RNG prologue only where the prediction counted its fills.
    assert figures.nodes_text(rng) == "216 (212 kernels as in eager + 2 extra kernels (not in the eager trace) + 1 memcpy + 1 memset)"
    from launchprof.model.findings import Note
    from launchprof.model.predicted import Prediction

    drawn = Prediction(median=2.0, explanation_finding=Note(code="replay-estimate", params={"rng_fills": 2}))
    rng = dataclasses.replace(rng, prediction=drawn)
    assert figures.nodes_text(rng) == "216 (212 kernels as in eager + 2 extra kernels (RNG prologue: 2 fills per generator) + 1 memcpy + 1 memset)"
    assert figures.nodes_text(reports.recorded_reports()["decode_loop.report.json"]) == "147 (one per eager kernel)"


def test_replay_mismatch_states_the_validation_rows_max_diff() -> None:
    report = reports.recorded_reports()["frozen_scalar.report.json"]
    assert report.validation.max_abs_diff == pytest.approx(0.37816, abs=1e-4)
    for fmt_name, text in render_all(report).items():
        assert "0.0763" not in text, fmt_name  # the first call's diff, a second figure under the same name
        assert "0.378" in text, fmt_name
    mismatch = next(h for h in report.hazards if h.kind == "replay-mismatch")
    assert figures.hazard_message(mismatch, report).endswith("max |diff| 0.378 over the 6 compared calls")
    assert figures.validation_text(report) == "5 of 6 calls differ (max |diff| 0.378)"


def test_structured_prediction_with_interval_basis_and_explanation() -> None:
    prediction = {"median": 3.1, "low": 2.6, "high": 3.5, "basis": "device profile H200/580/2.11 (cached); eager step and 22 kernels measured", "replay_step_us": 205.0, "explanation": "a replay of 22 nodes should take about 205 µs"}
    report = newer(reports.not_capturable(), prediction=Prediction(**prediction), predicted_speedup=3.1)
    md = renderer_for("md", EXPLAIN).render(report)
    assert "fix the hazards and expect about 3.10× (2.60–3.50×)" in md
    assert "| Predicted speedup | 3.10× (95% interval 2.60–3.50×) |" in md
    assert "> Prediction basis: device profile H200/580/2.11 (cached); eager step and 22 kernels measured." in md
    assert "A replay of 22 nodes should take about 205 µs" in md
    text = renderer_for("text", RenderOptions(project_root=reports.ROOT, width=80)).render(report)
    assert "fix the hazards and expect about 3.10× (2.60–3.50×)" in text
    old = reports.not_capturable()  # predicted_speedup alone: the median, no interval invented
    assert figures.prediction_text(old) == "fix the hazards and expect about 3.10×"


def test_speedup_method_in_timing_labels_and_new_memory_rows() -> None:
    base = reports.graphs_help()
    eager = dataclasses.replace(base.eager, timing="in-loop")
    speedup = Speedup(2.3156, 2.2741, 2.3522, method="ratio of medians, bootstrap interval")
    report = newer(base, replay={"clone_us": Stats(12.0, 11.0, 14.0, 50), "launchprof_bytes": 4 * 2**20}, eager=eager, speedup=speedup)
    rows = dict(key_numbers(report))
    assert rows["Eager step (in-loop)"].startswith("1.84 ms")
    assert rows["Speedup (eager / replay)"] == "2.32× (95% interval 2.27–2.35×), ratio of medians, bootstrap interval"
    assert rows["Output clone (timed alone)"] == "12.0 µs (p10–p90 11.0–14.0 µs, n=50)"
    assert rows["Memory launchprof adds (buffers, clones)"] == "4.0 MiB"


def test_script_failed_renders_in_every_format() -> None:
    report = dataclasses.replace(reports.crashed(), verdict="script-failed")
    for fmt_name in ("text", "md", "html", "junit", "sarif", "json"):
        text = renderer_for(fmt_name, OPTIONS).render(report)
        assert "script-failed" in text, fmt_name
    assert "The script failed before a verdict could be reached (the script raised torch.OutOfMemoryError" in renderer_for("md", OPTIONS).render(report)
    assert "the script failed before a verdict" in renderer_for("html", OPTIONS).render(report)


def test_junit_lint_kinds_come_from_lints_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import launchprof.lint.lint_rules as rules

    kinds = lint_kinds()
    assert kinds == frozenset(rules.KINDS_FOUND) and "hidden-sync" in kinds and "stream-race" not in kinds
    suite = ET.fromstring(JUnitRenderer(OPTIONS).render(reports.lint())).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["data-dependent-control-flow"].find("skipped") is None  # a lint rule looks for it
    assert cases["stream-race"].find("skipped") is not None  # lint never looks for it
    monkeypatch.setattr(rules, "KINDS_FOUND", tuple(k for k in rules.KINDS_FOUND if k != "data-dependent-control-flow"))
    suite = ET.fromstring(JUnitRenderer(OPTIONS).render(reports.lint())).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["data-dependent-control-flow"].find("skipped") is not None

    monkeypatch.setattr(rules, "KINDS_FOUND", ("hidden-sync", "data-dependent-control-flow"), raising=False)
    suite = ET.fromstring(JUnitRenderer(OPTIONS).render(reports.lint())).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["data-dependent-control-flow"].find("skipped") is None
    assert cases["pageable-copy"].find("skipped") is not None


def test_sarif_paths_and_fingerprints_use_the_project_root_and_identity() -> None:
    from launchprof.model.hazard_identity import hazard_fingerprint
    from launchprof.render.sarif import FINGERPRINT_KEY

    report = reports.not_capturable()
    run = json.loads(renderer_for("sarif", RenderOptions(project_root=reports.ROOT)).render(report))["runs"][0]
    first = run["results"][0]
    assert first["partialFingerprints"][FINGERPRINT_KEY] == hazard_fingerprint("hidden-sync", "train.py", "    if loss.item() > 1e3:")
    recorded = newer(report, project_root=str(reports.ROOT))
    recorded = dataclasses.replace(recorded, hazards=[dataclasses.replace(report.hazards[0], file="train.py")])
    run = json.loads(renderer_for("sarif", RenderOptions()).render(recorded))["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == reports.ROOT.as_uri() + "/"
    # A fingerprint recorded for a hazard whose code is not in the report is the one used.
    h = report.hazards[0]
    tagged = dataclasses.replace(report, hazards=[dataclasses.replace(h, details={}, fingerprint="abc123")])
    run = json.loads(renderer_for("sarif", OPTIONS).render(tagged))["runs"][0]
    assert run["results"][0]["partialFingerprints"][FINGERPRINT_KEY] == "abc123"


def test_validation_unknown_still_renders() -> None:
    report = dataclasses.replace(reports.graphs_help(), validation=Validation(4, 4, None))
    assert figures.validation_text(report) == "4/4 calls match"


def test_a_report_with_no_replay_names_the_setup_a_payback_would_count() -> None:
    """A not-capturable report used the labels of reports recorded before set-up was timed
    ("Capture / instantiate", "pay back instantiation") beside capturable ones that count
    capture + warm-up + instantiate: one definition, one label."""
    report = reports.not_capturable()
    assert report.replay is None
    count, basis = figures.payback(report)
    assert count is None and basis == "capture + warm-up + instantiate"
    for options in (OPTIONS, EXPLAIN):
        text = renderer_for("text", options).render(report)
        assert "Capture / instantiate" not in text and "pay back instantiation" not in text
        assert "Setup (capture" not in text and "pay back" not in text  # no graph: no set-up to count
