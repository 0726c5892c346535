"""One reader for the JSON files a user names (reports, device profiles), so that every
bad file gets the same kind of one-line error: missing, not text, not JSON at all (another
kind of file), cut short, or not an object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from launchprof.errors import UsageError


def read_json_object(p: Path, what: str) -> dict[str, Any]:
    """The top-level object of ``p``; ``what`` names the expected file in the errors
    ("a launchprof report", "a launchprof device profile")."""
    try:
        text = p.read_text(encoding="utf-8-sig")  # a byte-order mark is allowed
    except UnicodeDecodeError:
        raise UsageError(f"{p} is not {what}: not a text JSON file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {p}: {exc.strerror or exc}") from None
    if not text.strip():
        raise UsageError(f"{p} is not {what}: the file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos == len(text) - len(text.lstrip()):  # not even the first value parses
            raise UsageError(f"{p} is not {what}: it is not JSON") from None
        # Some of json's messages end in "at" ("Unterminated string starting at"): one "at" is enough.
        raise UsageError(f"{p} is not valid JSON (truncated?): {exc.msg.removesuffix(' at')} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p} is not {what} (top level is not an object)")
    return data
