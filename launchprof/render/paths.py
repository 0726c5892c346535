"""Where a report's files are shown from: the project root, one rule for every format.

The root is the one the command was given (``RenderOptions.project_root``), else the
one recorded in the report (``project_root``), else the project root of the script when
it exists here (``launchprof.common.project``'s rule), else the working folder. Paths under it
are shown relative to it, others absolute.
"""

from __future__ import annotations

from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from launchprof.enums import severity_rank
from launchprof.common.project import find_project_root, relative_to_root


def report_root(report: Any, options: Any = None) -> Path:
    given = getattr(options, "project_root", None) if options is not None else None
    if given is not None:
        return Path(given).resolve()
    recorded = getattr(report, "project_root", None)
    if recorded:
        return Path(recorded).resolve()
    script = Path(report.script)
    if script.exists():
        return find_project_root(script)
    return Path.cwd().resolve()


def relative(file: str, root: Path) -> str:
    """``file`` relative to ``root`` (a relative ``file`` already is), absolute outside it."""
    return relative_to_root(file, root)


def location(hazard: Any, root: Path) -> str | None:
    """``file:line`` as the user reads it, relative to the project root."""
    if not hazard.file:
        return None
    path = relative(hazard.file, root)
    return f"{path}:{hazard.line}" if hazard.line else path


_PACKAGE_DIRS = ("site-packages", "dist-packages")


def library_location(hazard: Any, root: Path) -> str | None:
    """``package/module.py:line`` of the library frame a hazard carries (the user's line that
    called into the library is its own location): the path from the folder the package is
    installed in, which says which package; else as any other file. None without one."""
    site = getattr(hazard, "library_site", None)
    if site is None or not site.file:
        return None
    parts = PurePath(site.file).parts
    cut = max((i for i, p in enumerate(parts) if p in _PACKAGE_DIRS), default=None)
    path = PurePosixPath(*parts[cut + 1 :]).as_posix() if cut is not None and cut + 1 < len(parts) else relative(site.file, root)
    return f"{path}:{site.line}" if site.line else path


def sorted_hazards(hazards: list[Any]) -> list[Any]:
    """Errors first; within a severity, the order the analysis found them."""
    return sorted(hazards, key=lambda h: severity_rank(h.severity))
