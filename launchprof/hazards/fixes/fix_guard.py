"""The one rule every written fix obeys, whichever writer wrote it: it never rewrites a
``def`` line, its decorators or its signature.

A hazard that launchprof could not place on a line inside the function falls back to the
function itself (its ``def`` line); a writer that rewrites "the hazard's line" would then
replace the signature (``def forward(self, x):`` with two comment lines, as seen on an
H200 run). Such a fix is not written: the note says there is no line of code to rewrite.
"""

from __future__ import annotations

from launchprof.common.source import definition_line
from launchprof.hazards.fixes.fix_context import cannot
from launchprof.hazards.fixes.fix_source import source_line
from launchprof.model.findings import FixReason
from launchprof.model.hazard_records import Fix


def rewrites_definition(fix: Fix) -> bool:
    """Whether ``fix`` replaces a line of a function's (or class's) definition header."""
    return bool(fix.after) and bool(fix.file) and bool(fix.line) and definition_line(str(fix.file), int(fix.line or 0)) is not None


def guarded(fix: Fix | None, kind: str) -> Fix | None:
    """``fix``, or the plain "cannot" in its place when it would rewrite a definition line;
    None (no fix line at all: an input launchprof copies itself) stays None."""
    if fix is None or not rewrites_definition(fix):
        return fix
    return cannot(source_line(fix.file, fix.line, fix.before), kind, FixReason.NO_LINE)
