"""One identity for a hazard, used by dedupe, ``compare new-hazards`` and SARIF fingerprints.

A hazard is the same hazard when its kind, its file (relative to the project root) and
the code text at its line are the same: an edit above it moves the line number but must
not make it "new". The code text is normalised (whitespace collapsed, trailing comment
dropped) so reformatting a line does not change it either.

The report's hazard model (which lint builds too) gets its ``fingerprint`` here
(:func:`fingerprint_of`); ``compare`` matches and SARIF fingerprints hazards from the
reader's own project root (:func:`identity_from`, :func:`match_key`,
:func:`located_fingerprint`).
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from collections.abc import Hashable, Mapping
from typing import Any, Protocol


class Identified(Protocol):
    """What identity reads of a hazard (``models.Hazard``, which lint builds too)."""

    kind: str
    file: str | None
    line: int | None
    message: str
    details: Mapping[str, Any]
    fingerprint: str


def without_comment(code: str) -> str:
    """A line of code stripped, less its trailing comment."""
    code = code.strip()
    if "#" in code:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
            comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
            if comment is not None:
                code = code[: comment.start[1]].rstrip()
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    return code


def normalise_code(code: str | None) -> str:
    """The code of one line without its comment, whitespace collapsed."""
    return " ".join(without_comment(code or "").split())


def hazard_fingerprint(kind: str, file: str | None, code: str | None) -> str:
    """Stable id: sha256 of kind, project-relative file and normalised code, 16 hex digits."""
    key = "\x1f".join((kind, file or "", normalise_code(code)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def code_at_line(hazard: Identified) -> str | None:
    """The code at the hazard's line: ``details["code"]``, else the snippet's entry for it."""
    code = hazard.details.get("code")
    if code:
        return str(code)
    for entry in hazard.details.get("snippet") or []:
        if isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[0] == hazard.line:
            return str(entry[1])
    return None


def fingerprint_of(hazard: Identified) -> str:
    """The fingerprint a hazard carries: from the code at its line when known, else from its
    message; one read from a report whose hazard carries no code is kept, since it cannot
    be derived again here."""
    code = code_at_line(hazard)
    if code is None and hazard.fingerprint:
        return hazard.fingerprint
    return hazard_fingerprint(hazard.kind, hazard.file, code or hazard.message)


def identity_from(hazard: Identified, rel_file: str | None) -> str | None:
    """The identity seen from a reader's own project root, or None when only the line can
    identify the hazard.

    With the code known it is derived from ``rel_file`` (so two checkouts agree even when
    the report holds absolute paths); without it, the report's own fingerprint when one was
    recorded (not the message fallback, which holds measured values)."""
    code = code_at_line(hazard)
    if code is not None:
        return hazard_fingerprint(hazard.kind, rel_file, code)
    if hazard.fingerprint and hazard.fingerprint != hazard_fingerprint(hazard.kind, hazard.file, hazard.message):
        return hazard.fingerprint
    return None


def located_fingerprint(hazard: Identified, rel_file: str) -> str:
    """A fingerprint for every hazard (SARIF's): its identity from this root, else kind and file alone."""
    return identity_from(hazard, rel_file) or hazard_fingerprint(hazard.kind, rel_file, None)


def match_key(kind: str, file: str | None, line: int | None, identity: str | None) -> Hashable:
    """What two reports' hazards are matched on (``compare``): the identity, else, with no
    code known, the place."""
    return ("code", identity) if identity else ("line", kind, file, line)
