"""The files lint reads: which ones a path names, how each is parsed, its module name.

A folder is walked for ``*.py`` files in a stable order, skipping caches, hidden
folders and virtual environments, so reports do not reorder between runs.
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from launchprof.errors import UsageError

# Folders that hold no user code: caches and installed packages (and any folder with a pyvenv.cfg).
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv"})




@dataclass(frozen=True, eq=False)
class SourceFile:
    """One parsed file. ``path`` is as the user gave it (or joined under a given folder)."""

    path: str
    module: str
    is_package: bool
    tree: ast.Module
    data: bytes

    @cached_property
    def lines(self) -> list[str]:
        return self.data.decode("utf-8", errors="replace").splitlines()

    def line(self, number: int) -> str:
        lines = self.lines
        return lines[number - 1] if 0 < number <= len(lines) else ""


def collect_files(paths: tuple[Path, ...] | list[Path]) -> list[str]:
    """Every file to lint: given files as they are, folders walked for ``*.py``.

    Hidden folders, caches and virtual environments are skipped; the order is stable
    (sorted per folder) so that reports do not reorder between runs.
    """
    files: list[str] = []
    seen: set[str] = set()
    for given in paths:
        p = Path(given)
        if p.is_file():
            candidates: list[str] = [str(p)]
        elif p.is_dir():
            candidates = list(_walk_py(str(p)))
        else:
            raise UsageError(f"no such file or folder: {p}")
        for f in candidates:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files


def _walk_py(top: str) -> Iterator[str]:
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def parse_file(path: str) -> SourceFile:
    """Read and parse one file; a file that cannot be read or parsed is a usage error with its line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the user's business, not lint's output
            warnings.simplefilter("ignore")
            tree = ast.parse(data, filename=path)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        raise UsageError(f"{where}: cannot parse: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UsageError(f"{path}: cannot parse: {exc}") from None
    module, is_package = module_name(path)
    return SourceFile(path, module, is_package, tree, data)


def module_name(path: str) -> tuple[str, bool]:
    """The dotted module name of ``path``: folders with ``__init__.py`` above it become packages."""
    p = Path(path).resolve()
    is_package = p.name == "__init__.py"
    parts = [] if is_package else [p.stem]
    folder = p.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts:  # an __init__.py outside any package
        parts = [p.parent.name]
    return ".".join(parts), is_package


