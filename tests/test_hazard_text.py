"""Hazards are records (launchprof.model.hazard_codes) and render/hazard_text writes their words."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from launchprof.model.hazard_codes import HazardCode, Placed, SyncReason
from launchprof.hazards.kinds import KINDS
from launchprof.lint import lint
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report, report_json_schema
from launchprof.render import figures
from launchprof.render.words.hazard_hints import HINTS, TITLES
from launchprof.render.words.hazard_lint_text import LINT, LINT_HINTS, sync_reason
from launchprof.render.words.hazard_runtime_text import RUNTIME
from launchprof.render.words.hazard_text import SENTENCES, hazard_hint, hazard_message, placed_message
from tests.recorded import report_of

ROOT = Path(__file__).resolve().parent.parent


def test_every_hazard_code_has_a_sentence_and_every_kind_its_words() -> None:
    assert set(SENTENCES) == {code.value for code in HazardCode}
    assert not set(RUNTIME) & set(LINT)
    assert set(LINT_HINTS) <= set(LINT)
    assert set(HINTS) == set(TITLES) == set(KINDS)
    assert all(HINTS[k] and TITLES[k] for k in KINDS)
    for reason in SyncReason:
        assert sync_reason({"reason": reason.value, "to": "bool"})


def test_the_rules_write_their_messages_and_hints_from_their_records() -> None:
    report = report_of("frozen_scalar")
    assert report.hazards and all(h.code != HazardCode.TEXT for h in report.hazards)
    for h in report.hazards:
        assert h.message == hazard_message(h.code, h.params)
        assert h.hint == hazard_hint(h.kind, h.code, h.params)
    scalar = next(h for h in report.hazards if h.code == HazardCode.FROZEN_SCALAR)
    assert scalar.params["argument"] == "lr" and isinstance(scalar.params["max_abs_diff"], float)  # a figure, not text


def test_a_saved_report_keeps_code_params_and_the_sentences() -> None:
    report = report_of("frozen_scalar")
    data = json.loads(report.to_json())
    for saved, h in zip(data["hazards"], report.hazards, strict=True):
        assert saved["message"] == h.message and saved["hint"] == h.hint
        assert saved["code"] == h.code and saved["params"] == json.loads(json.dumps(h.params))
    back = Report.from_dict(data)
    assert back.hazards == report.hazards
    assert [hazard_message(h.code, h.params) for h in back.hazards] == [h.message for h in report.hazards]


def test_a_hazard_without_a_code_keeps_its_message_as_text() -> None:
    data = json.loads(report_of("decode_loop").to_json())
    data["hazards"] = [
        {"kind": "hidden-sync", "severity": "error", "message": "written before codes", "file": "a.py", "line": 3, "hint": "old hint"}
    ]
    h = Report.from_dict(data).hazards[0]
    assert (h.code, h.params, h.message, h.hint) == ("text", {"text": "written before codes"}, "written before codes", "old hint")
    ranked = placed_message(h.code, h.params, h.message, {Placed.ON_RANKS: [0, 1]})
    assert ranked == "ranks 0, 1: written before codes"
    assert placed_message("from-the-future", {}, "newer words", {Placed.WHOLE_SCRIPT: True}).endswith(": newer words")


def test_the_schema_names_code_and_params() -> None:
    hazard = report_json_schema()["$defs"]["Hazard"]["properties"]
    assert hazard["code"]["type"] == "string" and hazard["params"]["type"] == "object"
    published = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    assert {"code", "params"} <= set(published["$defs"]["Hazard"]["properties"])


def test_the_validation_rows_max_diff_replaces_the_one_in_the_params() -> None:
    report = report_of("frozen_scalar")
    mismatch = next(h for h in report.hazards if h.code == HazardCode.REPLAY_MISMATCH)
    figure = figures.hazard_message(mismatch, report)
    assert figure.endswith(f"over the {report.validation.calls_compared} compared calls")
    assert figure.count("max |diff|") == 1
    # The figure comes from the params: words that merely look like a diff are left alone.
    reworded = dataclasses.replace(mismatch, message="replay differs (max |diff| 9.99)")
    assert figures.hazard_message(reworded, report) == figure


def test_lint_writes_codes_and_its_own_hints(tmp_path: Path) -> None:
    step = tmp_path / "step.py"
    step.write_text(
        "import torch\n\n"
        "def step(x: torch.Tensor, n: int):\n"
        "    y = x[x > 0]\n"
        "    if n > 2:\n"
        "        x = x + 1\n"
        "    return x.sum().item() + y.sum()\n"
    )
    result = lint([step], target="step")
    codes = {h.code for h in result.hazards}
    assert {HazardCode.LINT_SYNC_MASK, HazardCode.LINT_SYNC_CALL, HazardCode.LINT_ARGUMENT_DECIDES} <= codes
    for h in result.hazards:
        assert h.message == hazard_message(h.code, h.params) and h.hint == hazard_hint(h.kind, h.code, h.params)
    mask = next(h for h in result.hazards if h.code == HazardCode.LINT_SYNC_MASK)
    assert mask.hint.startswith(KINDS["hidden-sync"].hint) and mask.hint.endswith("masked_fill to keep the shape fixed.")


def test_the_words_load_without_the_hazard_rules() -> None:
    code = (
        "import sys\n"
        "import launchprof.render.words.hazard_text\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('launchprof.hazards', 'launchprof.analysis', 'pydantic', 'rich')))\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_hazard_built_from_a_sentence_alone_is_text() -> None:
    h = Hazard(kind="hidden-sync", severity="error", message="words", file=None, line=None, hint="")
    assert h.code == HazardCode.TEXT and h.params == {"text": "words"} and hazard_message(h.code, h.params) == "words"
