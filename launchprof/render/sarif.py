"""SARIF 2.1.0 for code scanning (GitHub, GitLab, VS Code SARIF viewer).

One rule per hazard kind, so that ``ruleId`` is the stable kind id and a dashboard
groups findings across runs. Paths are relative to the project root (``%SRCROOT%``),
the one rule of :mod:`launchprof.common.project`. Fingerprints are the one hazard identity of
:mod:`launchprof.model.hazard_identity` (kind, relative file, the code on its line), not
where the line currently sits, so an edit above a hazard does not open a new alert.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from launchprof.enums import Severity
from launchprof.model.hazard_identity import located_fingerprint
from launchprof.hazards.kinds import KINDS
from launchprof.render.renderer import Renderer
from launchprof.render.words.hazard_hints import HINTS, TITLES
from launchprof.render.words.fix_text import fix_sentence
from launchprof.render.paths import relative, report_root
from launchprof.render.ranks import sarif_ranks
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report
from launchprof.render.words.verify_text import VERIFIED, fix_state, verification_text

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "launchprofHazard/v2"  # v2: launchprof.model.hazard_identity's fingerprint


def level(severity: str) -> str:
    try:
        return Severity(severity).sarif_level
    except ValueError:
        return "warning"


@dataclass(frozen=True)
class RuleText:
    """What a SARIF rule says of one hazard kind."""

    id: str
    severity: str
    title: str
    hint: str


def _rule(kind: RuleText) -> dict[str, Any]:
    name = "".join(part.capitalize() for part in kind.id.split("-"))
    return {
        "id": kind.id,
        "name": name,
        "shortDescription": {"text": kind.title},
        "fullDescription": {"text": f"{kind.title}. {kind.hint}"},
        "help": {"text": kind.hint},
        "defaultConfiguration": {"level": level(kind.severity)},
        "properties": {"tags": ["cuda-graphs", "performance"]},
    }


def _artifact(file: str, root: Path) -> dict[str, str]:
    """A URI under %SRCROOT% when the file lies under the root, else an absolute file URI."""
    rel = relative(file, root)
    if PurePosixPath(rel).is_absolute():
        return {"uri": Path(rel).as_uri()}
    return {"uri": quote(rel), "uriBaseId": SRCROOT}


class SarifRenderer(Renderer):
    format = "sarif"
    extension = ".sarif"

    def render(self, report: Report) -> str:
        kinds = {k.id: RuleText(k.id, k.severity, TITLES[k.id], HINTS[k.id]) for k in KINDS.values()}
        for h in report.hazards:  # a kind newer than this launchprof still gets a rule
            kinds.setdefault(h.kind, RuleText(h.kind, h.severity, h.kind, h.hint))
        index = {kind_id: i for i, kind_id in enumerate(kinds)}
        root = report_root(report, self.options)
        run: dict[str, Any] = {
            "tool": {
                "driver": {
                    "name": "launchprof",
                    "version": report.launchprof_version,
                    "rules": [_rule(k) for k in kinds.values()],
                }
            },
            "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
            "invocations": [self._invocation(report)],
            "results": [self._result(h, report, kinds, index, root) for h in report.hazards],
            "properties": {"verdict": report.verdict, "mode": report.mode, "target": report.target, **sarif_ranks(report)},
        }
        doc = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def _result(self, hazard: Hazard, report: Report, kinds: dict[str, RuleText], index: dict[str, int], root: Path) -> dict[str, Any]:
        result: dict[str, Any] = {
            "ruleId": hazard.kind,
            "ruleIndex": index[hazard.kind],
            "level": level(hazard.severity),
            "message": {"text": hazard.message or kinds[hazard.kind].title},
            "properties": {"source": hazard.source, "hint": hazard.hint},
        }
        # A hazard with no file (a capture error no line could be tied to) is shown on the script.
        file = hazard.file or (report.script if Path(report.script).suffix == ".py" else None)
        rel = relative(file, root) if file else ""
        result["partialFingerprints"] = {FINGERPRINT_KEY: located_fingerprint(hazard, rel)}
        if file is None:
            return result
        physical: dict[str, Any] = {"artifactLocation": _artifact(file, root)}
        if hazard.file and hazard.line and hazard.line > 0:
            physical["region"] = {"startLine": hazard.line}
        result["locations"] = [{"physicalLocation": physical}]
        related = _library_location(hazard, root)
        if related is not None:
            result["relatedLocations"] = [related]
        trial = verification_text(hazard.fix)
        if trial:  # the written fix's state; only a verified fix is one a tool may apply
            result["properties"]["fix"] = {"state": fix_state(hazard.fix), "text": trial}
        change = fix_change(hazard, root) if fix_state(hazard.fix) == VERIFIED else None
        if change is not None:
            result["fixes"] = [change]
        return result

    @staticmethod
    def _invocation(report: Report) -> dict[str, Any]:
        invocation: dict[str, Any] = {"executionSuccessful": report.run is None or report.run.complete}
        if report.run is not None and report.run.cause:
            invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": report.run.cause}}]
        return invocation


def _library_location(hazard: Hazard, root: Path) -> dict[str, Any] | None:
    """The library frame a hazard filed at the user's calling line carries, as SARIF's
    related location (an absolute file URI: it lies outside the project)."""
    site = hazard.library_site
    if site is None or not site.file:
        return None
    physical: dict[str, Any] = {"artifactLocation": _artifact(site.file, root)}
    if site.line and site.line > 0:
        physical["region"] = {"startLine": site.line}
    text = f"in library code: {site.code}" if site.code else "in library code"
    return {"id": 1, "physicalLocation": physical, "message": {"text": text}}


def fix_change(hazard: Hazard, root: Path) -> dict[str, Any] | None:
    """SARIF ``fixes``: the written fix as a replacement of the lines it was written from."""
    fix = getattr(hazard, "fix", None)
    if fix is None or not fix.after or not fix.line or not (fix.file or hazard.file):
        return None
    spans = (fix.params or {}).get("before_lines")
    if isinstance(spans, list) and spans != list(range(fix.line, fix.line + len(spans))):
        return None  # lines apart (a read and its later use): no one region to replace
    count = len(fix.before.splitlines()) if fix.before.strip() else 0
    lines = [f"{fix.indent}{line}" if line else "" for line in fix.after.splitlines()]
    if not count:  # an insertion: an empty region at the start of its line, which stays
        region = {"startLine": fix.line, "startColumn": 1, "endLine": fix.line, "endColumn": 1}
        return _change(fix, hazard, root, region, "".join(f"{line}\n" for line in lines))
    # The deleted region ends at its last line's end, before the newline: no trailing newline here.
    return _change(fix, hazard, root, {"startLine": fix.line, "endLine": fix.line + count - 1}, "\n".join(lines))


def _change(fix: Any, hazard: Hazard, root: Path, region: dict[str, int], text: str) -> dict[str, Any]:
    return {
        "description": {"text": fix_sentence(fix)},
        "artifactChanges": [
            {
                "artifactLocation": _artifact(fix.file or hazard.file, root),
                "replacements": [
                    {"deletedRegion": region, "insertedContent": {"text": text}}
                ],
            }
        ],
    }
