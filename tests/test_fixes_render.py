"""Written fixes in every format: nothing cut at 80 columns, SARIF ``fixes`` valid."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from recorded import recorded, report_of

from launchprof.model.hazard_records import FixVerification
from launchprof.render.renderer import RenderOptions
from launchprof.render.console import ConsoleRenderer
from launchprof.render.html import HtmlRenderer
from launchprof.render.markdown import MarkdownRenderer
from launchprof.render.sarif import SarifRenderer

SARIF_SCHEMA = Path(__file__).resolve().parent / "schemas" / "sarif-schema-2.1.0.json"


def _squash(text: str) -> str:
    return "".join(text.split())


def test_long_fixes_wrap_at_80_columns_and_nothing_is_cut() -> None:
    for name in recorded(["unjoined_stream", "numpy_rng", "hidden_sync"]):
        report = report_of(name)
        out = ConsoleRenderer(RenderOptions(width=80)).render(report)
        assert max(len(line) for line in out.splitlines()) <= 80
        flat = _squash(out)
        for h in report.hazards:
            if h.fix is None:  # a finding launchprof handles itself: no fix line
                continue
            head, _, rule = h.fix.note.partition(" The general rule: ")
            if not h.fix.after and rule:
                # the rule is printed once for its kind ("How to fix, by kind"), not per hazard
                assert _squash(head.rstrip(".")) in flat and _squash(rule) in flat, (name, h.fix.note)
                assert flat.count(_squash(rule)) == 1, (name, rule)
            else:
                assert _squash(h.fix.note) in flat, (name, h.fix.note)
            for line in h.fix.after.splitlines():
                assert _squash(line) in flat, (name, line)
        assert "…" not in out


def test_a_wrapped_fix_line_continues_beside_its_marker() -> None:
    """hidden_sync's synchronize fix ("+ # (nothing here) call torch.cuda.synchronize() in
    the caller, after the replay") wraps at 80 columns: the rest of the line is indented
    past the "+", so before and after stay readable as a diff."""
    out = ConsoleRenderer(RenderOptions(width=80)).render(report_of("hidden_sync")).splitlines()
    start = next(i for i, line in enumerate(out) if "+     # (nothing here)" in line)
    code_col = out[start].index("#")
    follow = out[start + 1]
    assert "after the replay" in follow and not follow.lstrip().startswith(("+", "-"))
    assert len(follow) - len(follow.lstrip()) == code_col, (out[start], follow)


def test_join_line_is_printed_whole() -> None:
    out = ConsoleRenderer(RenderOptions(width=80)).render(report_of("unjoined_stream"))
    assert "torch.cuda.current_stream().wait_stream(side)" in out


def test_identical_fix_printed_once_listing_both_lines() -> None:
    report = report_of("data_dependent")
    out = ConsoleRenderer(RenderOptions(width=200)).render(report)
    assert out.count("torch.where((use_residual % 2).bool()") == 1
    assert "the same as for sample_models/data_dependent.py:14" in out
    md = MarkdownRenderer().render(report)
    assert md.count("torch.where((use_residual % 2).bool()") == 1


def test_kind_rule_printed_once_with_all_its_lines() -> None:
    out = ConsoleRenderer(RenderOptions(width=400)).render(report_of("hidden_sync"))
    assert out.count("Capture cannot wait on the GPU") == 1
    assert "sample_models/hidden_sync.py:15, sample_models/hidden_sync.py:16" in out


def test_markdown_and_html_show_before_and_after() -> None:
    report = report_of("frozen_scalar")
    md = MarkdownRenderer().render(report)
    assert "-     param.add_(grad, alpha=-lr)" in md and "+     param.add_(grad * -lr_t)" in md
    html = HtmlRenderer().render(report)
    assert "param.add_(grad * -lr_t)" in html and "lr_t.fill_(lr)" in html


def test_sarif_fixes_replace_the_line_and_validate() -> None:
    report = report_of("hidden_sync")
    assert not any(r.get("fixes") for r in json.loads(SarifRenderer().render(report))["runs"][0]["results"])  # none verified in this run
    report = dataclasses.replace(report, hazards=[verified(h) for h in report.hazards])
    doc = json.loads(SarifRenderer().render(report))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema = pytest.importorskip("jsonschema")  # a dev dependency; absent on the bare GPU image
    jsonschema.validators.validator_for(schema)(schema).validate(doc)
    results = doc["runs"][0]["results"]
    item = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 15)
    change = item["fixes"][0]["artifactChanges"][0]
    rep = change["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": 15, "endLine": 15}
    assert rep["insertedContent"]["text"] == "    scale = h.abs().mean()"
    assert change["artifactLocation"]["uri"] == "sample_models/hidden_sync.py"


def verified(h):
    """``h`` as if its written fix had passed its trial (tools apply only those)."""
    if h.fix is None or not h.fix.after:
        return h
    trial = FixVerification(captured=True, calls_compared=4, matches=4, replay_step_us=20.0, speedup=3.0)
    return dataclasses.replace(h, fix=dataclasses.replace(h.fix, verified=True, verification=trial))
