"""GitHub Actions workflow commands (``::error file=...,line=...::message``) for hazards.

They go to standard error, never after a report on standard output: ``lint -f json >
out.json`` on a runner (which sets ``GITHUB_ACTIONS=true``) must stay valid JSON. The
runner reads workflow commands from either stream.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from launchprof.enums import Severity
from launchprof.render.paths import relative
from launchprof.render.words.verify_text import verification_text


def github_enabled(flag: bool) -> bool:
    return flag or os.environ.get("GITHUB_ACTIONS") == "true"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def relative_path(file: str, root: Path | None) -> str:
    """``file`` relative to ``root`` (or the working folder); absolute outside it."""
    return relative(file, (root or Path.cwd()).resolve())


def _command(severity: str) -> str:
    try:
        return Severity(severity).github_command
    except ValueError:
        return "warning"


def annotations(hazards: list[Any], root: Path | None = None) -> list[str]:
    """One workflow command per hazard, paths relative to the project root ``root``."""
    lines = []
    for h in hazards:
        props = [f"title={_escape_property('launchprof ' + h.kind)}"]
        if h.file:
            props.insert(0, f"file={_escape_property(relative_path(h.file, root))}")
            if h.line:
                props.insert(1, f"line={h.line}")
        trial = verification_text(getattr(h, "fix", None))  # the written fix's state: verified, failed, suggestion
        text = h.message + " — " + h.hint + (f" (written fix {trial})" if trial else "")
        lines.append(f"::{_command(h.severity)} {','.join(props)}::{_escape_data(text)}")
    return lines
