"""The project root: where file paths in reports are relative to.

One rule for analyze, lint, SARIF and annotations alike, so that a hazard has the same
``file`` in every format and in every run on every machine: the nearest folder at or
above the script (or linted path) that holds ``pyproject.toml``, ``setup.py`` or
``.git``; otherwise the script's own folder. ``--project-root`` overrides it.

A folder that cannot be looked into (no permission) holds no marker as far as this rule
knows: the search goes on above it. Whether the script or linted files themselves can be
read is for their readers to say, with the one-line error or note they give any file.
"""

from __future__ import annotations

import os
from pathlib import Path

from launchprof.errors import UsageError

MARKERS = ("pyproject.toml", "setup.py", ".git")


def find_project_root(path: str | Path, override: str | Path | None = None) -> Path:
    """The project root for ``path`` (a file or a folder), or ``override`` when given."""
    if override is not None:
        return resolved(override)
    start = resolved(path)
    # os.path's tests answer False where the OS refuses to look (Path's raise PermissionError)
    folder = start if os.path.isdir(start) else start.parent
    for candidate in (folder, *folder.parents):
        if any(os.path.exists(candidate / marker) for marker in MARKERS):
            return candidate
    return folder


def resolved(path: str | Path) -> Path:
    """``path`` made absolute with its links followed; a link loop is the user's to mend, so
    it is a usage error (Python 3.11 raises RuntimeError for it, later versions OSError)."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "Too many levels of symbolic links"
        raise UsageError(f"cannot read {path}: {why}") from None


def relative_to_root(file: str | Path, root: Path) -> str:
    """``file`` relative to ``root`` with forward slashes; absolute when it lies outside it."""
    p = Path(file)
    resolved = p.resolve() if p.is_absolute() else (root / p).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(resolved) if os.sep == "/" else resolved.as_posix()
