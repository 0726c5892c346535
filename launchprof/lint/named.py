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
from pathlib import Path

from launchprof.errors import UsageError
from launchprof.fileio.input_files import SOURCE_SUFFIXES, has_python_shebang

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


