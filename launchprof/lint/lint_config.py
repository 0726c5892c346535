"""lint settings read from the project's ``pyproject.toml`` (``[tool.launchprof]``).

Generated code and vendored folders belong in the project's own configuration, next
to the code, rather than in every CI command line: ``exclude = ["build/*", "*_pb2.py"]``.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from launchprof.errors import UsageError


def configured_excludes(root: Path) -> tuple[str, ...]:
    """The ``exclude`` globs of ``[tool.launchprof]`` in ``root/pyproject.toml``, if any."""
    path = root / "pyproject.toml"
    if not os.path.isfile(path):  # also when its folder may not be looked into: no marker, no settings
        return ()
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read [tool.launchprof]: {exc}") from None
    value = config.get("tool", {}).get("launchprof", {}).get("exclude", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        raise UsageError(f"{path}: [tool.launchprof] exclude must be a list of glob strings")
    return tuple(value)
