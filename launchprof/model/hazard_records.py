"""The hazards section: one record per hazard, and the fix written for its line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from launchprof.enums import Severity
from launchprof.model.findings import Param
from launchprof.model.hazard_identity import fingerprint_of
from launchprof.model.records import model


@model
class FixVerification:
    """What the worker found when it tried a fix on the user's own calls (worker/fix_trials.py):
    a patched copy of the function, captured, replayed on the recorded calls and compared
    leaf by leaf with the original's eager result, then timed. ``reason_code`` says why it was
    not tried or why it failed (launchprof.model.fix_scope.TrialReason); "" when verified."""

    captured: bool | None = None  # None: not tried
    calls_compared: int = 0
    matches: int = 0
    replay_step_us: float | None = None  # the patched graph's replay median (copy-in + replay)
    speedup: float | None = None  # the original's eager median / that replay median
    reason_code: str = ""


@model
class Fix:
    """A fix written for one line: what is there, what to write instead, and why.

    ``after`` is empty when launchprof could not write the fix for this line; ``note`` then
    says so and gives the general rule. ``file``/``line`` name the line ``before`` is taken
    from when it is not the hazard's own (the line that rebinds a captured global).
    ``note`` is the sentence of ``code`` and ``params`` (a FixCode, worded by
    launchprof.render.words.fix_text); a fix read from a report without a code keeps its note."""

    before: str
    after: str
    note: str
    file: str | None = None
    line: int | None = None
    indent: str = ""  # the indentation of ``line`` in the file: ``after`` is written without it
    code: str = ""  # a FixCode's value: what the fix does, or why none was written
    params: dict[str, Param] = dataclasses.field(default_factory=dict)  # the names and lines its note says
    # Tried on the user's calls: True captured and matched eager, False failed, None not tried
    # (``verification.reason_code`` says why).
    verified: bool | None = None
    verification: FixVerification | None = None


@model
class LibrarySite:
    """The line inside an installed package (torch, transformers …) where a hazard really
    happened, when the hazard is filed at the user's line that called into that package."""

    file: str
    line: int | None = None
    code: str = ""
    function: str = ""


@model
class Hazard:
    kind: str
    severity: Severity
    message: str
    file: str | None  # relative to the project root; absolute only outside it
    line: int | None
    hint: str
    source: str = "runtime"  # "runtime" (measured) or "static" (lint)
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    fix: Fix | None = None  # written for this hazard's line (launchprof.hazards.fixes)
    # kind + relative file + the code at the line, so an edit above the hazard (a new line
    # number) keeps its identity. Derived whenever the code is known; a fingerprint read from
    # a report whose hazard carries no code is kept, since it cannot be derived again here.
    fingerprint: str = ""
    # What was found as a record (launchprof.model.hazard_codes): ``message`` and ``hint`` are its
    # words (launchprof.render.words.hazard_text). A hazard without a code (from a report written
    # before hazards had codes, or built from a sentence alone) gets ``text`` and its
    # message as ``{"text": message}``.
    code: str = ""
    params: dict[str, Param] = dataclasses.field(default_factory=dict)
    # Where in a library it happened, when ``file``/``line`` are the user's calling line; None
    # when the hazard is in the user's own code (and in reports written before it existed).
    library_site: LibrarySite | None = None

    def __post_init__(self) -> None:
        # The rules pass a kind's severity as they declare it; renderers compare by identity.
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "fingerprint", fingerprint_of(self))
        if not self.code:
            object.__setattr__(self, "code", "text")
            object.__setattr__(self, "params", {"text": self.message})
