"""Where reports go: pairing ``-f``/``-o`` options, guessing formats, atomic writes."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from launchprof.errors import UsageError

FORMATS = ("text", "json", "md", "sarif", "junit", "html")

_BY_EXTENSION = {
    ".txt": "text",
    ".json": "json",
    ".md": "md",
    ".markdown": "md",
    ".sarif": "sarif",
    ".xml": "junit",
    ".html": "html",
    ".htm": "html",
}


@dataclass(frozen=True)
class Output:
    """One rendering of the report: a format, and a path (None means standard output)."""

    format: str
    path: Path | None


def guess_format(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".sarif.json"):
        return "sarif"
    fmt = _BY_EXTENSION.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot guess the format of {path}: give -f ({', '.join(FORMATS)}) "
            f"or use one of the extensions {', '.join(sorted(_BY_EXTENSION))}"
        )
    return fmt


def plan_outputs(formats: list[str], paths: list[Path], allowed: tuple[str, ...] = FORMATS) -> list[Output]:
    """Pair the i-th ``-f`` with the i-th ``-o``; a path without ``-f`` has its format guessed.

    Formats beyond the last path go to standard output (at most one may). Checked
    up front so that a typo fails in a second, not after a long measurement.
    """
    for fmt in formats:
        if fmt not in allowed:
            raise UsageError(f"unknown format {fmt!r}: choose from {', '.join(allowed)}")
    outputs: list[Output] = []
    for i, path in enumerate(paths):
        fmt = formats[i] if i < len(formats) else guess_format(path)
        if fmt not in allowed:
            raise UsageError(f"format {fmt!r} (from {path}) is not available here: choose from {', '.join(allowed)}")
        check_writable(path)
        outputs.append(Output(fmt, path))
    extra = formats[len(paths) :]
    if len(extra) > 1:
        raise UsageError(f"{len(extra)} formats without an output path; only one can go to standard output: add -o PATH")
    outputs.extend(Output(fmt, None) for fmt in extra)
    return outputs


def check_writable(path: Path) -> None:
    """Fail now, with one line, if ``path`` cannot be written later."""
    if path.is_dir():
        raise UsageError(f"output path {path} is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"output folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"output folder {parent} is not writable")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write to a temporary file beside ``path``, then rename: readers never see half a file."""
    path = Path(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
