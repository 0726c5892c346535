"""Checks on the files a user names as input: scripts, reports, run files, device profiles.

One check for every command, so that the same mistake reads the same everywhere: a missing
file, a folder, a FIFO or device (``/dev/null``, a ``<(cmd)`` pipe: never the file meant,
and reading one can block until a writer comes), or a path that cannot even be looked at.
And one rule for which launchprof file a JSON object is, so that a report given where a
device profile is expected (or the other way round) is named as what it is, instead of
failing on a field or a version number that means nothing there.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from pathlib import Path
from typing import Any

from launchprof.errors import UsageError

REPORT = "report"
PROFILE = "device profile"
RUN_FILE = "run file"

# What each command asks for instead, after "give ...".
WANTED_PROFILE = "a device profile (the JSON file `launchprof crossover` writes)"
WANTED_SAVED = "a run file (.lprun) or a JSON report"


def input_mode(path: Path, missing: str) -> int:
    """``path``'s mode (symlinks followed); ``missing`` is the error when nothing is there,
    and a path that cannot be looked at (a folder above it without permission) says why."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise UsageError(missing) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def not_regular(path: Path | str, wanted: str) -> UsageError:
    """The one wording for a FIFO, socket or device named as an input file."""
    return UsageError(f"{path} is not a regular file (a pipe or device): give {wanted}")


def check_input_file(path: Path, wanted: str, missing: str) -> None:
    """``path`` is a regular file (or a symlink to one), checked without opening it:
    otherwise exit 2 with one line that says what it is and asks for ``wanted``."""
    mode = input_mode(path, missing)
    if stat.S_ISDIR(mode):
        raise UsageError(f"{path} is a folder: give {wanted}")
    if not stat.S_ISREG(mode):
        raise not_regular(path, wanted)


def starts_like_json(path: Path) -> bool:
    """A JSON document (a report, a profile): its first non-blank byte opens an object or array."""
    try:
        with open(path, "rb") as fh:
            return fh.read(64).lstrip()[:1] in (b"{", b"[")
    except OSError:
        return False


def is_python_script(path: Path) -> bool:
    """A Python script as lint takes one (named ``*.py``/``*.pyw``, or a python shebang on its
    first line), and neither a zip nor JSON whatever its name: a script given where a
    saved report belongs is named as what it is, not as broken JSON."""
    if has_zip_signature(path) or starts_like_json(path):
        return False

    if path.name.lower().endswith(SOURCE_SUFFIXES):
        return True
    try:
        with open(path, "rb") as fh:
            return has_python_shebang(fh.readline(256))
    except OSError:
        return False


def has_zip_signature(path: Path) -> bool:
    """A run file is a zip: its first bytes say so whatever the file is called."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def is_run_zip(path: Path) -> bool:
    """A zip that holds a run header: a launchprof run file, whatever it is called."""
    if not has_zip_signature(path):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            return "header.json" in zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def json_kind(data: dict[str, Any]) -> str | None:
    """Which launchprof file a top-level JSON object is, by the fields only it has
    (any version): :data:`REPORT`, :data:`PROFILE`, or None when it looks like neither."""
    if "verdict" in data and ("hazards" in data or "eager" in data):
        return REPORT
    if "crossover" in data and ("samples" in data or "partial" in data):
        return PROFILE
    return None


def refuse_other_kind(path: Path, data: dict[str, Any], expected: str, wanted: str) -> None:
    """A launchprof file of another kind than ``expected`` is named as what it is."""
    kind = json_kind(data)
    if kind is not None and kind != expected:
        raise other_kind(path, kind, expected, wanted)


def other_kind(path: Path, kind: str, expected: str, wanted: str) -> UsageError:
    hint = " (analyze and report take a device profile with --profile)" if kind == PROFILE else ""
    return UsageError(f"{path} is a launchprof {kind}, not a {expected}: give {wanted}{hint}")


SOURCE_SUFFIXES = (".py", ".pyw")  # .pyw: the same source, run without a console on Windows


# The interpreter word of a shebang: python, python3, python3.12, python3.13t, pypy3 ...
_PYTHON = re.compile(r"(?:python|pypy)[\w.-]*")


def has_python_shebang(first_line: bytes) -> bool:
    """``first_line`` is ``#!`` and a python interpreter, named directly or through ``env``.

    Only the interpreter counts (``env``'s first word that is not an option or a
    ``VAR=value``): ``#!/bin/sh python3`` runs sh, not python.
    """
    if not first_line.startswith(b"#!"):
        return False
    words = first_line[2:].decode("utf-8", errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and _PYTHON.fullmatch(os.path.basename(words[0])) is not None
