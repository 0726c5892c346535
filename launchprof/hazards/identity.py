"""One identity for a hazard, used by dedupe, ``compare new-hazards`` and SARIF fingerprints.

A hazard is the same hazard when its kind, its file (relative to the project root) and
the code text at its line are the same: an edit above it moves the line number but must
not make it "new". The code text is normalised (whitespace collapsed, trailing comment
dropped) so reformatting a line does not change it either.
"""

from __future__ import annotations

import hashlib
import io
import tokenize


def normalise_code(code: str | None) -> str:
    """The code of one line without its comment, whitespace collapsed."""
    text = (code or "").strip()
    if "#" in text:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
            comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
            if comment is not None:
                text = text[: comment.start[1]]
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    return " ".join(text.split())


def hazard_fingerprint(kind: str, file: str | None, code: str | None) -> str:
    """Stable id: sha256 of kind, project-relative file and normalised code, 16 hex digits."""
    key = "\x1f".join((kind, file or "", normalise_code(code)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
