"""A hazard filed at the user's line that called into a library shows the library's line as
a second location in every format; a hazard without one shows nothing more."""

from __future__ import annotations

import dataclasses
import json

import reports
from launchprof.model.hazard_records import LibrarySite
from launchprof.render import RenderOptions, renderer_for

LIB = "/opt/conda/lib/python3.12/site-packages/transformers/utils/output_capturing.py"
SITE = LibrarySite(file=LIB, line=90, code="self.global_var = None", function="reset")


def _report(with_site: bool):
    report = reports.graphs_help()
    effect = reports.hazard("host-side-effect", "write to `self.global_var` runs once at capture", str(reports.ROOT / "decode.py"), 41)
    if with_site:
        effect = dataclasses.replace(effect, library_site=SITE)
    return dataclasses.replace(report, hazards=[effect])


def _render(fmt: str, report) -> str:
    return renderer_for(fmt, RenderOptions(project_root=reports.ROOT, width=200)).render(report)


def test_every_format_names_the_library_line() -> None:
    report = _report(True)
    for fmt in ("text", "md", "html"):
        out = _render(fmt, report)
        assert "transformers/utils/output_capturing.py:90" in out, fmt
        assert "self.global_var = None" in out, fmt
        assert "decode.py:41" in out, fmt  # still filed at the user's line
    [result] = json.loads(_render("sarif", report))["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 41
    [related] = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "file://" + LIB
    assert related["physicalLocation"]["region"]["startLine"] == 90
    assert "self.global_var = None" in related["message"]["text"]
    [written] = json.loads(_render("json", report))["hazards"]
    assert written["library_site"] == {"file": LIB, "line": 90, "code": "self.global_var = None", "function": "reset"}


def test_a_hazard_in_the_users_code_shows_no_library_line() -> None:
    report = _report(False)
    for fmt in ("text", "md", "html"):
        assert "in library code" not in _render(fmt, report), fmt
    [result] = json.loads(_render("sarif", report))["runs"][0]["results"]
    assert "relatedLocations" not in result
    assert json.loads(_render("json", report))["hazards"][0]["library_site"] is None


def test_no_fix_is_guessed_for_the_users_calling_line() -> None:
    from launchprof.hazards.fixes import write_fix
    from launchprof.hazards.fixes.fix_context import FixContext
    from launchprof.model.findings import FixReason

    [effect] = _report(True).hazards
    fix = write_fix(effect, FixContext(scalar_args=frozenset()))
    assert fix.after == "" and fix.params["reason"] == FixReason.IN_LIBRARY.value
    assert "inside the library code this line calls, at transformers/utils/output_capturing.py:90" in fix.note
    [own] = _report(False).hazards
    assert write_fix(own, FixContext(scalar_args=frozenset())).params.get("reason") != FixReason.IN_LIBRARY.value
