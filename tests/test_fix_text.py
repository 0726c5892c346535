"""A written fix is a record (``Fix.code``/``params``) and render/fix_text writes its note."""

from __future__ import annotations

import dataclasses

from launchprof.model.findings import FixCode, FixReason
from launchprof.model.hazard_records import Fix
from launchprof.render.words.fix_text import REASONS, SENTENCES, cannot_head, fix_note, fix_sentence
from tests.recorded import recorded, report_of


def test_every_fix_code_and_reason_has_words() -> None:
    assert set(SENTENCES) == {code.value for code in FixCode}
    assert set(REASONS) == {reason.value for reason in FixReason}


def test_recorded_fixes_carry_their_code_and_the_note_is_its_sentence() -> None:
    seen = set()
    for name in recorded(["unjoined_stream", "numpy_rng", "hidden_sync", "data_dependent"]):
        for h in report_of(name).hazards:
            fix = h.fix
            if fix is None:
                continue
            assert fix.code in SENTENCES, (name, fix)
            seen.add(fix.code)
            assert fix_sentence(fix) == fix.note, (name, fix.code)
            if fix.code == FixCode.CANNOT.value:
                assert fix.params["kind"] == h.kind and fix.note.startswith(cannot_head(fix) or "?")
    assert len(seen) >= 2


def test_cannot_ends_with_the_rule_and_names_its_reason() -> None:
    params = {"kind": "frozen-scalar", "reason": FixReason.NAME_NOT_ON_LINE.value, "name": "n"}
    assert fix_note(FixCode.CANNOT, params, "the rule.") == (
        "No fix is written for this line: `n` is not on this line. The general rule: the rule."
    )
    assert fix_note(FixCode.CANNOT, {"kind": "x", "reason": ""}) == "launchprof cannot write the fix for this line."


def test_a_fix_without_a_readable_code_keeps_its_note() -> None:
    old = Fix(before="a", after="b", note="words from an older launchprof")
    assert fix_sentence(old) == "words from an older launchprof"
    broken = dataclasses.replace(old, code=FixCode.SCALAR_TENSOR.value, params={})
    assert fix_sentence(broken) == "words from an older launchprof"
    future = dataclasses.replace(old, code="from-the-future")
    assert fix_sentence(future) == "words from an older launchprof"
