"""Whether a file named on the command line is Python source that lint should read.

A mistyped path (``notes.txt``, ``README``, ``config.json``) often parses as Python:
linted as such it passes with "no hazards", a misleading green check in CI. So a named
file must look like Python to its user: its name ends in ``.py`` or ``.pyw`` (or the file a symlink
points to does), or its first line is a python shebang, as in ``scripts/train`` that
starts with ``#!/usr/bin/env python3``. Folders are walked for ``*.py`` files only
(:func:`launchprof.lint.files.collect_files`); the shebang is read only for named files,
so a walk never opens files it will not lint.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from launchprof.errors import UsageError

SOURCE_SUFFIXES = (".py", ".pyw")  # .pyw: the same source, run without a console on Windows
# The interpreter word of a shebang: python, python3, python3.12, python3.13t, pypy3 ...
_PYTHON = re.compile(r"(?:python|pypy)[\w.-]*")
# A shebang longer than this is not run by Linux anyway (BINPRM_BUF_SIZE is 256).
_FIRST_LINE_BYTES = 1024


def check_named_file(path: Path) -> None:
    """Raise :class:`UsageError` when the named file ``path`` is not a Python file.

    A file that cannot be opened passes: reading it later says exactly why (a dangling
    symlink, no permission), which is more useful than "not a Python file".
    """
    if path.name.endswith(SOURCE_SUFFIXES) or os.path.realpath(path).endswith(SOURCE_SUFFIXES):
        return
    try:
        with open(path, "rb") as f:
            first = f.readline(_FIRST_LINE_BYTES)
    except OSError:
        return
    if not has_python_shebang(first):
        raise UsageError(f"{path} is not a Python file (lint reads *.py files, and scripts whose first line is a #!...python shebang)")


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
