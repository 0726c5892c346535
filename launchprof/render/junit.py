"""JUnit XML: one testcase per check, so Jenkins and GitLab list what passed and failed.

The checks are ``capture``, ``validation`` and one per hazard kind. A check that did
not run (capture of an eager-only or lint report, a kind the static lint cannot see,
anything after the point where a run died) is *skipped*, never *passed*: a green row
must mean the thing was looked at.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from launchprof.enums import Severity
from launchprof.hazards.kinds import KINDS
from launchprof.render import figures
from launchprof.render.renderer import Renderer
from launchprof.render.paths import location, report_root, sorted_hazards
from launchprof.render.ranks import rank_checks
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report
from launchprof.render.words.verify_text import verification_text

def lint_kinds() -> frozenset[str]:
    """The kinds `launchprof lint` can find, as its own rules declare them; the others need a run.

    Imported when needed: the lint package is not loaded to render a measured report.
    """
    from launchprof.lint import lint_rules as rules

    return frozenset(rules.KINDS_FOUND)

# Kinds found while capturing or validating (docs/architecture.md "How analyze works"); the rest in the eager pass.
CAPTURE_KINDS = frozenset({
    "unjoined-stream", "capture-allocation", "host-side-effect", "capture-failed",
    "kept-autograd-graph", "optimizer-not-capturable", "grad-scaler", "legacy-stream",
})  # fmt: skip
VALIDATION_KINDS = frozenset({"replay-mismatch"})


@dataclass(frozen=True)
class Check:
    """One check's outcome. ``status``: passed, failed or skipped; ``reason`` says why it
    was skipped or failed when no hazard does; ``hazards`` are what it found."""

    name: str
    classname: str
    status: str
    reason: str = ""
    hazards: tuple[Hazard, ...] = ()


def capture_attempted(report: Report) -> bool:
    return report.mode != "lint" and (report.replay is not None or report.verdict == "not-capturable")


def _not_run(report: Report, default: str) -> str:
    if report.run is not None and not report.run.complete:
        return f"the run stopped before this check: {report.run.cause or 'unknown cause'}"
    return default


def capture_check(report: Report) -> Check:
    if report.mode == "lint":
        return Check("capture", "launchprof", "skipped", "static check only: nothing was captured")
    if report.replay is not None and report.verdict != "not-capturable":
        return Check("capture", "launchprof", "passed")
    if report.verdict == "not-capturable":
        errors = tuple(h for h in sorted_hazards(report.hazards) if h.severity == Severity.ERROR)
        return Check("capture", "launchprof", "failed", (report.run and report.run.cause) or "capture failed", errors)
    return Check("capture", "launchprof", "skipped", _not_run(report, "no target: nothing was captured"))


def validation_check(report: Report) -> Check:
    val = report.validation
    if val is None or val.calls_compared == 0:
        if report.mode == "lint":
            return Check("validation", "launchprof", "skipped", "static check only: nothing was replayed")
        return Check("validation", "launchprof", "skipped", _not_run(report, "nothing was captured to validate"))
    if val.matches < val.calls_compared:
        return Check("validation", "launchprof", "failed", f"replay vs eager: {figures.validation_text(report)}")
    return Check("validation", "launchprof", "passed")


def _kind_ran(report: Report, kind: str) -> bool:
    if report.mode == "lint":
        return kind in lint_kinds()
    if kind in VALIDATION_KINDS:
        return report.validation is not None
    if kind in CAPTURE_KINDS:
        return capture_attempted(report)
    return report.eager is not None and (report.run is None or report.run.complete)


def kind_check(report: Report, kind: str) -> Check:
    found = tuple(h for h in report.hazards if h.kind == kind)
    failing = tuple(h for h in found if Severity(h.severity).blocks)
    if failing:
        return Check(kind, "launchprof.hazards", "failed", hazards=failing)
    if found or _kind_ran(report, kind):
        return Check(kind, "launchprof.hazards", "passed", hazards=found)
    if report.mode == "lint":
        reason = "the static lint does not look for this kind"
    else:
        reason = _not_run(report, "nothing was replayed to validate" if kind in VALIDATION_KINDS else "this check did not run")
    return Check(kind, "launchprof.hazards", "skipped", reason)


def checks(report: Report) -> list[Check]:
    kinds = list(KINDS) + sorted({h.kind for h in report.hazards} - set(KINDS))
    ranks = [Check(name, "launchprof.ranks", status, reason) for name, status, reason in rank_checks(report)]
    return [capture_check(report), validation_check(report)] + [kind_check(report, k) for k in kinds] + ranks


class JUnitRenderer(Renderer):
    format = "junit"
    extension = ".xml"

    def render(self, report: Report) -> str:
        results = checks(report)
        project_root = report_root(report, self.options)
        counts = {
            "tests": str(len(results)),
            "failures": str(sum(c.status == "failed" for c in results)),
            "errors": "0",
            "skipped": str(sum(c.status == "skipped" for c in results)),
            "time": "0",
        }
        root = ET.Element("testsuites", {"name": "launchprof", **counts})
        name = f"launchprof {report.mode}: {report.target or '(no target)'} in {report.script}"
        suite = ET.SubElement(root, "testsuite", {"name": name, **counts, "timestamp": report.created})
        props = ET.SubElement(suite, "properties")
        for key, value in self._properties(report).items():
            ET.SubElement(props, "property", {"name": key, "value": value})
        for check in results:
            self._testcase(suite, check, report, project_root)
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

    def _testcase(self, suite: ET.Element, check: Check, report: Report, root: Path) -> None:
        case = ET.SubElement(suite, "testcase", {"classname": check.classname, "name": check.name, "time": "0"})
        lines = [f"{h.severity}: {self._line(h, report, root)}{self._trial(h)}" for h in check.hazards]
        if check.status == "failed":
            message = self._line(check.hazards[0], report, root) if check.hazards else check.reason
            body = "\n".join(lines + [f"fix: {check.hazards[0].hint}"] if check.hazards else [check.reason])
            ET.SubElement(case, "failure", {"message": message, "type": check.name}).text = body
        elif check.status == "skipped":
            ET.SubElement(case, "skipped", {"message": check.reason})
        elif lines:  # info-level findings of a passed check
            ET.SubElement(case, "system-out").text = "\n".join(lines)

    @staticmethod
    def _trial(hazard: Hazard) -> str:
        """The written fix's state after the hazard's line: "(written fix verified: …)"."""
        trial = verification_text(hazard.fix)
        return f" (written fix {trial})" if trial else ""

    @staticmethod
    def _line(hazard: Hazard, report: Report, root: Path) -> str:
        loc = location(hazard, root)
        message = figures.hazard_message(hazard, report)
        return f"{loc}: {message}" if loc else message

    @staticmethod
    def _properties(report: Report) -> dict[str, str]:
        props = {"verdict": report.verdict, "verdict_label": figures.verdict_label(report), "script": report.script, "target": report.target or "", "gpu": report.machine.gpu or ""}
        if report.speedup is not None:
            props["speedup"] = f"{report.speedup.median:.3f}"
        if report.run is not None and report.run.cause:
            props["stopped"] = report.run.cause
        return props
