"""GitHub Actions workflow commands (``::error file=...,line=...::message``) for hazards."""

from __future__ import annotations

import os
from pathlib import Path

from launchprof.session import Hazard

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def github_enabled(flag: bool) -> bool:
    return flag or os.environ.get("GITHUB_ACTIONS") == "true"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def relative_path(file: str, source_root: Path | None) -> str:
    """``file`` relative to ``source_root`` (or the working folder) when it lies under it."""
    root = (source_root or Path.cwd()).resolve()
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(file).as_posix()


def annotations(hazards: list[Hazard], source_root: Path | None = None) -> list[str]:
    lines = []
    for h in hazards:
        props = [f"title={_escape_property('launchprof ' + h.kind)}"]
        if h.file:
            props.insert(0, f"file={_escape_property(relative_path(h.file, source_root))}")
            if h.line:
                props.insert(1, f"line={h.line}")
        lines.append(f"::{_LEVEL.get(h.severity, 'warning')} {','.join(props)}::{_escape_data(h.message + ' — ' + h.hint)}")
    return lines
