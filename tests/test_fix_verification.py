"""A written fix's trial, on CPU: which fixes are tried and why others are not, the trial's
event attached to the very fix it tried, the kept-graph fix verified from its own
measurement, and the three states in every format (tests/test_gpu_fix_trials.py runs the
trials themselves on a GPU)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest
from recorded import load, report_of

from launchprof.common.source import use_sources
from launchprof.events.fix_events import FixTrialEvent
from launchprof.events.record import event_dict
from launchprof.events.capture_events import ValidationEvent
from launchprof.events.timing_events import TimingEvent
from launchprof.events.training_events import KeptGraphEvent
from launchprof.events.capture_events import CaptureEvent
from launchprof.hazards.fixes.fix_verdicts import with_verification
from launchprof.hazards.fixes.fixes_to_try import fixes_to_try
from launchprof.model.findings import FixCode
from launchprof.model.fix_scope import CALLER_SIDE, CHANGES_NUMERICS, TrialReason, scope_reason
from launchprof.model.hazard_records import Fix, FixVerification, Hazard
from launchprof.render.github import annotations
from launchprof.render.console import ConsoleRenderer
from launchprof.render.html import HtmlRenderer
from launchprof.render.junit import JUnitRenderer
from launchprof.render.markdown import MarkdownRenderer
from launchprof.render.renderer import RenderOptions
from launchprof.render.sarif import SarifRenderer, fix_change
from launchprof.run.evidence import Evidence, parse_events

SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"


def fix(code: FixCode, after: str = "y = x", before: str = "y = x.item()", line: int = 7) -> Fix:
    return Fix(before=before, after=after, note="n", file="m.py", line=line, indent="    ", code=code.value)


def hazard(f: Fix, kind: str = "hidden-sync") -> Hazard:
    return Hazard(kind=kind, severity="error", message="m", file="m.py", line=f.line, hint="the rule", fix=f)


# --- which fixes are tried -------------------------------------------------------------------


def test_the_scope_of_a_fix_says_whether_it_can_be_tried() -> None:
    assert scope_reason(fix(FixCode.KEEP_ON_DEVICE)) is TrialReason.NONE
    assert scope_reason(fix(FixCode.WHERE_SELECT)) is TrialReason.NONE
    for code in (FixCode.SCALAR_TENSOR, FixCode.DETACH_RETURN, FixCode.DEVICE_COUNTER, FixCode.MOVED_TO_CALLER,
                 FixCode.SYNC_OUTSIDE, FixCode.PRINT_OUTSIDE, FixCode.TO_HOST_AFTER_REPLAY):  # fmt: skip
        assert code.value in CALLER_SIDE and scope_reason(fix(code)) is TrialReason.CALLER_SIDE
    assert scope_reason(fix(FixCode.KEEP_ON_DEVICE, after="y = x\n# in the caller: z = y.item()")) is TrialReason.CALLER_SIDE
    assert FixCode.MASK_READ.value in CHANGES_NUMERICS and scope_reason(fix(FixCode.MASK_READ)) is TrialReason.NUMERICS
    assert scope_reason(fix(FixCode.CANNOT, after="")) is TrialReason.NO_FIX
    assert not CALLER_SIDE & CHANGES_NUMERICS


def test_the_worker_writes_the_same_fixes_the_report_shows() -> None:
    run = load("hidden_sync")
    with use_sources(run.sources):
        written = fixes_to_try(run.events)
        shown = [h.fix for h in report_of("hidden_sync").hazards if h.fix is not None and h.fix.after]
    assert [(f.file, f.line, f.after) for _, f in written] == [(f.file, f.line, f.after) for f in shown]
    assert {k for k, _ in written} == {"hidden-sync"}


# --- the trial attached to its fix -----------------------------------------------------------


def trial(f: Fix, **kw) -> FixTrialEvent:
    return FixTrialEvent(file=f.file, line=f.line, after=f.after, code=f.code, kind="hidden-sync", **kw)


def test_a_trial_event_is_gathered_and_attached_to_the_fix_it_names() -> None:
    good, bad, untried = fix(FixCode.KEEP_ON_DEVICE, line=7), fix(FixCode.WHERE_SELECT, after="y = torch.where(c, a, b)", line=9), fix(FixCode.KEEP_ON_DEVICE, after="z = w", line=11)
    raw = [
        event_dict(trial(good, verified=True, captured=True, calls_compared=4, matches=4, replay_step_us=21.0, eager_step_us=63.0, speedup=3.0)),
        event_dict(trial(bad, verified=False, captured=True, calls_compared=4, matches=1, reason=TrialReason.REPLAY_DIFFERS.value)),
        event_dict(trial(dataclasses.replace(untried, after="something else"), verified=True, captured=True, calls_compared=1, matches=1)),
    ]
    ev = parse_events(json.loads(json.dumps(raw)))
    assert len(ev.fix_trials) == 3
    out = {h.fix.line: h.fix for h in with_verification([hazard(good), hazard(bad), hazard(untried)], ev)}
    assert out[7].verified is True
    assert out[7].verification == FixVerification(captured=True, calls_compared=4, matches=4, replay_step_us=21.0, speedup=3.0, reason_code="")
    assert out[9].verified is False and out[9].verification.reason_code == "replay-differs" and out[9].verification.matches == 1
    # A trial of another text is not this fix's: the fix tried must be the fix shown.
    assert out[11].verified is None and out[11].verification.reason_code == "not-tried"


def test_a_run_without_trials_reads_not_tried_or_its_scope() -> None:
    hs = [hazard(fix(FixCode.KEEP_ON_DEVICE)), hazard(fix(FixCode.SYNC_OUTSIDE, line=8)), hazard(fix(FixCode.CANNOT, after="", line=9))]
    reasons = [h.fix.verification.reason_code for h in with_verification(hs, Evidence())]
    assert reasons == ["not-tried", "caller-side", "no-fix"]


def test_recorded_runs_show_their_fixes_as_not_tried() -> None:
    report = report_of("hidden_sync")
    fixes = [h.fix for h in report.hazards if h.fix is not None]
    assert fixes and all(f.verified is None for f in fixes)
    assert {f.verification.reason_code for f in fixes} == {"not-tried", "numerics", "caller-side"}


def kept_graph_evidence(matches: list[bool]) -> Evidence:
    failure = CaptureEvent(ok=False, index=5)
    return Evidence(
        kept_graph=KeptGraphEvent(index=5, failure=failure, retried=True, captured=True),
        validations=[ValidationEvent(index=6 + i, match=m) for i, m in enumerate(matches)],
        burst_wall_us={"eager": [300.0, 320.0, 310.0], "replay": [100.0, 110.0, 105.0]},
    )


def test_the_kept_graph_fix_is_verified_from_its_own_measurement() -> None:
    h = hazard(fix(FixCode.DETACH_RETURN, before="return loss", after="return loss.detach()"), kind="kept-autograd-graph")
    (out,) = with_verification([h], kept_graph_evidence([True, True, True]))
    assert out.fix.verified is True
    v = out.fix.verification
    assert (v.captured, v.calls_compared, v.matches, v.replay_step_us, v.reason_code) == (True, 3, 3, 105.0, "")
    assert v.speedup == pytest.approx(310.0 / 105.0)
    (failed,) = with_verification([h], kept_graph_evidence([True, False]))
    assert failed.fix.verified is False and failed.fix.verification.reason_code == "replay-differs"
    # Without the retry it is a caller-side suggestion like any other.
    (plain,) = with_verification([h], Evidence())
    assert plain.fix.verified is None and plain.fix.verification.reason_code == "caller-side"


# --- the three states in every format ---------------------------------------------------------


def with_states(report):
    """hidden_sync's report with its line-15 fix verified, its `if` fix failed, the rest as they are."""
    out = []
    for h in report.hazards:
        f = h.fix
        if f is not None and f.code == FixCode.KEEP_ON_DEVICE.value:
            f = dataclasses.replace(f, verified=True, verification=FixVerification(captured=True, calls_compared=4, matches=4, replay_step_us=20.0, speedup=4.52))
        elif f is not None and f.code == FixCode.WHERE_SELECT.value:
            f = dataclasses.replace(f, verified=False, verification=FixVerification(captured=False, reason_code="did-not-capture"))
        out.append(dataclasses.replace(h, fix=f))
    return dataclasses.replace(report, hazards=out)


@pytest.fixture(scope="module")
def states():
    return with_states(report_of("hidden_sync"))


def test_the_terminal_shows_verified_failed_and_suggested_fixes(states) -> None:
    text = ConsoleRenderer(RenderOptions(width=100)).render(states)
    assert "verified: captures, matches eager on 4 calls, 4.52× faster" in text
    assert "tried, failed: the fixed step still does not capture; the general rule is below" in text
    assert "+ scores = torch.where(" not in text  # the failed fix is not shown as a fix
    assert "suggested fix (not verified):" in text and "not verified: the change is in the caller's loop" in text


def test_markdown_and_html_show_the_states(states) -> None:
    md = MarkdownRenderer().render(states)
    assert "*verified: captures, matches eager on 4 calls, 4.52× faster*" in md
    assert "**Fix tried for `sample_models/_helpers.py:10`** (`hidden-sync`): tried, failed: the fixed step still does not capture" in md
    assert "**Suggested fix (not verified) for `sample_models/hidden_sync.py:19`**" in md
    html = HtmlRenderer().render(states)
    assert "verified: captures, matches eager on 4 calls, 4.52× faster" in html and "Fix tried, failed:" in html
    assert "Suggested fix (not verified)" in html


def test_sarif_applies_only_verified_fixes_and_says_each_state(states) -> None:
    results = json.loads(SarifRenderer().render(states))["runs"][0]["results"]
    with_fixes = [r for r in results if r.get("fixes")]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in with_fixes] == [15]
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["properties"].get("fix", {}) for r in results}
    assert by_line[15]["state"] == "verified" and by_line[10]["state"] == "failed" and by_line[19]["state"] == "suggestion"


def test_junit_and_github_annotations_say_each_state(states) -> None:
    cases = ET.fromstring(JUnitRenderer().render(states)).iter("testcase")
    body = "\n".join((c.find("failure").text or "") for c in cases if c.find("failure") is not None)
    assert "(written fix verified: captures, matches eager on 4 calls, 4.52× faster)" in body
    assert "(written fix tried, failed: the fixed step still does not capture)" in body
    lines = annotations(states.hazards)
    assert any("written fix suggestion (not verified): the change is in the caller" in line for line in lines)


def test_a_sarif_insertion_keeps_its_anchor_line() -> None:
    h = hazard(Fix(before="", after="torch.cuda.current_stream().wait_stream(side)", note="n", file="m.py", line=12, indent="    "))
    rep = fix_change(h, Path("."))["artifactChanges"][0]["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": 12, "startColumn": 1, "endLine": 12, "endColumn": 1}
    assert rep["insertedContent"]["text"] == "    torch.cuda.current_stream().wait_stream(side)\n"
    two = hazard(Fix(before="a = 1\nb = 2", after="c = 3", note="n", file="m.py", line=12, indent="  "))
    rep = fix_change(two, Path("."))["artifactChanges"][0]["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": 12, "endLine": 13} and rep["insertedContent"]["text"] == "  c = 3"


def test_the_schema_publishes_the_trial_fields() -> None:
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    assert {"verified", "verification"} <= set(defs["Fix"]["properties"])
    assert set(defs["FixVerification"]["properties"]) == {"captured", "calls_compared", "matches", "replay_step_us", "speedup", "reason_code"}


# --- the worker's side, without a GPU -------------------------------------------------------------


class Written:
    def __init__(self) -> None:
        self.events: list = []

    def write(self, record) -> None:
        self.events.append(record)


def fake_run(tmp_path: Path, ranks: int = 0) -> SimpleNamespace:
    run = load("hidden_sync")
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in run.events), encoding="utf-8")
    config = SimpleNamespace(events_path=str(log), ranks=ranks)
    return SimpleNamespace(config=config, events=Written(), captured=None, replay_sets=[], eager_sets=[((1,), {})], busy=False, sources=run.sources)


@pytest.mark.parametrize(("ranks", "reason"), [(2, "ranks"), (0, None)])
def test_the_worker_writes_one_trial_event_per_fix_it_may_try(tmp_path: Path, ranks: int, reason: str | None) -> None:
    torch = pytest.importorskip("torch")
    from launchprof.worker.fix_trials import try_fixes

    run = fake_run(tmp_path, ranks)
    with use_sources(run.sources):
        try_fixes(run)
    assert run.busy is False
    trials = run.events.events
    assert [t.line for t in trials] == [10, 15]  # the in-function fixes; caller-side and numerics ones are not tried
    expected = reason or ("no-gpu" if not torch.cuda.is_available() else None)
    if expected:
        assert {(t.verified, t.reason) for t in trials} == {(None, expected)}
