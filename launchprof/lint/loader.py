"""Modules of the user's project, found and parsed when a call leads into them.

A target calls ``running_mean`` from ``pkg.stats``: lint must read ``pkg/stats.py``
even when only the target's file was named, and must not read torch's or numpy's
sources (a call into an installed package is assumed safe, except for the syncing
torch APIs lint knows by name). Imports resolve as Python would resolve them from
the project: the folder above each linted file's top package, the project root and
its ``src/`` folder. Only files under the project root (and not excluded), or named
on the command line, are read. A module is parsed when first needed, so a target run keeps only
the trees it walks.
"""

from __future__ import annotations

import os
from pathlib import Path

from launchprof.lint.files import SKIP_DIRS, SourceFile, Unreadable, is_excluded, module_name, parse_file


def import_folder(path: str, module: str) -> str:
    """The folder from which ``module`` (the dotted name of ``path``) is importable."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(module.count(".") + (1 if os.path.basename(path) == "__init__.py" else 0)):
        folder = os.path.dirname(folder)
    return folder


class ModuleLoader:
    """Finds a module by dotted name among the given files and the project's folders."""

    def __init__(self, root: Path, given: list[str], exclude: tuple[str, ...] = ()) -> None:
        self.root = str(root.resolve())
        self.exclude = exclude
        self.known: dict[str, str] = {}
        folders: list[str] = []
        for path in given:
            module = module_name(path)[0]
            self.known.setdefault(module, path)
            folders.append(import_folder(path, module))
        folders += [self.root, os.path.join(self.root, "src")]
        self.folders = [f for f in dict.fromkeys(folders) if os.path.isdir(f)]
        self.notes: list[str] = []
        self.failed: set[str] = set()  # modules of the project whose file could not be parsed
        self._tops: set[str] | None = None

    def unreadable_module(self, path: str) -> bool:
        """``path`` leads into a module of the project that exists but could not be parsed."""
        parts = path.split(".")
        return any(".".join(parts[:i]) in self.failed for i in range(1, len(parts) + 1))

    def _top_names(self) -> set[str]:
        """Top-level names importable from the search folders (read once)."""
        if self._tops is None:
            tops: set[str] = set()
            for folder in self.folders:
                try:
                    entries = os.listdir(folder)
                except OSError:
                    continue
                tops.update(e[:-3] if e.endswith(".py") else e for e in entries)
            self._tops = tops
        return self._tops

    def find(self, module: str) -> str | None:
        """The file that defines ``module``, inside the project (or named on the command line)."""
        if module in self.known:
            return self.known[module]
        top = module.partition(".")[0]
        if top not in self._top_names() and not any(m.partition(".")[0] == top for m in self.known):
            return None
        rel = module.replace(".", os.sep)
        for folder in self.folders:
            for candidate in (os.path.join(folder, rel + ".py"), os.path.join(folder, rel, "__init__.py")):
                if os.path.isfile(candidate) and self._inside_project(candidate):
                    return candidate
        return None

    def _inside_project(self, path: str) -> bool:
        real = os.path.realpath(path)
        if not (real == self.root or real.startswith(self.root + os.sep)):
            return False
        if any(part in SKIP_DIRS for part in Path(real[len(self.root) :]).parts):
            return False
        return not is_excluded(path, Path(self.root), self.exclude)

    def load(self, module: str) -> SourceFile | None:
        """Parse the module's file; one that cannot be parsed is a note and stays unfollowed."""
        path = self.find(module)
        if path is None:
            return None
        try:
            source = parse_file(path)
        except Unreadable as exc:
            if str(exc) not in self.notes:
                self.notes.append(str(exc))
            self.failed.add(module)
            return None
        if source.module != module:  # found by the search folders: named as imported
            source = SourceFile(source.path, module, source.is_package, source.tree, source.data)
        return source
