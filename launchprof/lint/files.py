"""The files lint reads: which ones a path names, how each is parsed, its module name.

A folder is walked for ``*.py`` files in a stable order, skipping caches, hidden
folders and virtual environments, so reports do not reorder between runs.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import stat
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from launchprof.errors import UsageError
from launchprof.fileio.input_files import not_regular
from launchprof.lint.named import check_named_file

# Folders that hold no user code: caches and installed packages (and any folder with a pyvenv.cfg).
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages", "venv"})


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


class Unreadable(Exception):
    """A file lint could not read or parse: a note in the report, not a stop (its text says why)."""


def collect_files(
    paths: tuple[Path, ...] | list[Path], root: Path, exclude: tuple[str, ...] = (), unlisted: list[str] | None = None
) -> list[str]:
    """Every file to lint: given files as they are, folders walked for ``*.py``.

    Hidden folders, caches, virtual environments and ``exclude`` globs (matched against
    the path relative to ``root`` and against each name) are skipped in folders; a file
    named on the command line is linted even when excluded, but only when it is a
    Python file (:mod:`launchprof.lint.named`). The order is stable (sorted per
    folder) so that reports do not reorder between runs. A dangling symlink is kept:
    reading it fails later, as a note. A folder inside a walked one that cannot be
    listed goes to ``unlisted`` (a note, as an unreadable file is); a named path that
    cannot be read, a pipe or a device is a usage error, as is nothing to lint at all.
    """
    files: list[str] = []
    seen: set[str] = set()
    unlisted = [] if unlisted is None else unlisted
    for given in paths:
        p = Path(given)
        if _is_named_folder(p):
            candidates = list(_walk_py(str(p), root.resolve(), exclude, unlisted))
        else:
            check_named_file(p)
            candidates = [str(p)]
        for f in candidates:
            key = real_path(f)
            if key not in seen:
                seen.add(key)
                files.append(f)
    if not files:  # a mistyped folder must not pass a CI gate with nothing checked
        excluded = " (or every one is excluded)" if exclude else ""
        unread = f" ({len(unlisted)} folder(s) not read: {'; '.join(unlisted[:3])})" if unlisted else ""
        raise UsageError(f"no Python files to lint in {', '.join(str(p) for p in paths)}{excluded}{unread}")
    return files


def _is_named_folder(p: Path) -> bool:
    """True for a folder, False for a file (or a dangling symlink, noted when read);
    a usage error for anything else, said as for any input file."""
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(p):
            return False
        raise UsageError(f"no such file or folder: {p}") from None
    except OSError as exc:
        raise UsageError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        return True
    if not stat.S_ISREG(mode):
        raise not_regular(p, "Python files or folders to lint")
    return False


def is_excluded(path: str, root: Path, exclude: tuple[str, ...]) -> bool:
    """``path`` matches an exclude glob, by its path under ``root`` or by its own name."""
    if not exclude:
        return False
    name = os.path.basename(path)
    try:
        rel = Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        rel = Path(path).as_posix()
    return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) or fnmatch.fnmatch(rel, g.rstrip("/") + "/*") for g in exclude)


def _walk_py(top: str, root: Path, exclude: tuple[str, ...], unlisted: list[str]) -> Iterator[str]:
    """The ``*.py`` files under ``top``; a folder below it that cannot be listed is noted
    in ``unlisted``, ``top`` itself (named by the user) is a usage error, as a named file is."""

    def failed(exc: OSError) -> None:
        if exc.filename == top:
            raise UsageError(f"{top}: cannot read: {exc.strerror or exc}")
        unlisted.append(f"{exc.filename}: cannot read: {exc.strerror or exc}")

    for folder, dirs, names in os.walk(top, onerror=failed):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIP_DIRS
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
            and not is_excluded(os.path.join(folder, d), root, exclude)
        )
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith(".py") and not is_excluded(path, root, exclude):
                yield path


def read_file(path: str) -> bytes:
    """The file's bytes; :class:`Unreadable` (with the reason) when it cannot be read. A
    ``*.py`` that is a pipe or device (met in a folder walk) is not opened: reading it would
    block for ever."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise Unreadable(f"{path}: cannot read: not a regular file (a pipe or device)")
        return Path(path).read_bytes()
    except OSError as exc:
        reason = "a dangling symlink" if os.path.islink(path) and not os.path.exists(path) else exc.strerror or str(exc)
        raise Unreadable(f"{path}: cannot read: {reason}") from None


def parse_file(path: str, data: bytes | None = None) -> SourceFile:
    """Read and parse one file; :class:`Unreadable` names the file (and line) when it cannot be."""
    if data is None:
        data = read_file(path)
    try:
        with warnings.catch_warnings():  # invalid escapes etc. are the user's business, not lint's output
            warnings.simplefilter("ignore")
            tree = ast.parse(data, filename=path)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        raise Unreadable(f"{where}: cannot parse: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise Unreadable(f"{path}: cannot parse: {exc}") from None
    module, is_package = module_name(path)
    return SourceFile(path, module, is_package, tree, data)


def module_name(path: str) -> tuple[str, bool]:
    """The dotted module name of ``path``: folders with ``__init__.py`` above it become packages."""
    folder, name = os.path.split(real_path(path))
    is_package = name == "__init__.py"
    parts = [*_package_parts(folder), *([] if is_package else [os.path.splitext(name)[0]])]
    if not parts:  # an __init__.py outside any package
        parts = [os.path.basename(folder)]
    return ".".join(parts), is_package


# Folder lookups, once per folder and run (``forget_folders`` starts a run): resolving a
# path and looking for __init__.py up the tree for every file cost as much as a fifth
# of checking it.
_REAL_FOLDERS: dict[str, str] = {}
_PACKAGES: dict[str, tuple[str, ...]] = {}


def forget_folders() -> None:
    """Start a run afresh: files may have moved since the last one in this process."""
    _REAL_FOLDERS.clear()
    _PACKAGES.clear()


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, resolving each folder once per run."""
    folder, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    real = _REAL_FOLDERS.get(folder)
    if real is None:
        real = _REAL_FOLDERS[folder] = os.path.realpath(folder)
    full = os.path.join(real, name)
    return os.path.realpath(full) if os.path.islink(full) else full


def _package_parts(folder: str) -> tuple[str, ...]:
    """The dotted parts of the package a (resolved) folder is: () when it has no __init__.py."""
    parts = _PACKAGES.get(folder)
    if parts is None:
        parent = os.path.dirname(folder)
        is_package = parent != folder and os.path.isfile(os.path.join(folder, "__init__.py"))
        parts = _PACKAGES[folder] = (*_package_parts(parent), os.path.basename(folder)) if is_package else ()
    return parts


