"""Every module lint knows, and how a dotted path or a target name resolves among them.

Lint follows calls from a target into the functions it calls, so it needs to know,
for every module, what it defines and what each imported name stands for. The index
answers two questions: which functions are the targets, and which function a name
or dotted path means.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from launchprof.errors import UsageError
import launchprof.lint.values as v
from launchprof.lint.definitions import ClassInfo, FunctionRef
from launchprof.lint.files import SourceFile
from launchprof.lint.loader import ModuleLoader
from launchprof.lint.modules import ModuleInfo
from launchprof.lint.values import Val
from launchprof.common.targets import MAX_NAMES_SHOWN



class Index:
    """The modules lint has read, and dotted-path lookup across them.

    With a :class:`~launchprof.lint.loader.ModuleLoader`, a path into a module of the
    project that is not read yet loads it (target mode follows calls anywhere in the
    project); without one (``--all``), only the given modules are known.
    """

    def __init__(self, sources: list[SourceFile] | tuple[SourceFile, ...] = (), loader: ModuleLoader | None = None) -> None:
        self.modules: dict[str, ModuleInfo] = {}
        self.all_modules: list[ModuleInfo] = []
        self.loader = loader
        self._missing: set[str] = set()
        for src in sources:
            self.add(src)

    def add(self, src: SourceFile) -> ModuleInfo:
        info = ModuleInfo(src, self)
        self.all_modules.append(info)
        self.modules.setdefault(info.name, info)
        return info

    def drop(self, info: ModuleInfo) -> None:
        """Forget a module no target is in (the loader reads it again if a call leads there)."""
        if self.all_modules and self.all_modules[-1] is info:
            self.all_modules.pop()
        else:
            self.all_modules.remove(info)
        if self.modules.get(info.name) is info:
            del self.modules[info.name]

    def module(self, name: str) -> ModuleInfo | None:
        """The module of that dotted name: read already, or loaded from the project now."""
        found = self.modules.get(name)
        if found is not None or self.loader is None or name in self._missing:
            return found
        source = self.loader.load(name)
        if source is None:
            self._missing.add(name)
            return None
        return self.add(source)

    def lookup(self, path: str, depth: int = 0) -> FunctionRef | ClassInfo | ModuleInfo | None:
        """What a dotted path names in the linted code, following re-exports a few levels."""
        if depth > 4:
            return None
        parts = path.split(".")
        module: ModuleInfo | None = None
        for i in range(len(parts), 0, -1):
            module = self.module(".".join(parts[:i]))
            if module is not None:
                parts = parts[i:]
                break
        if module is None:
            return None
        if not parts:
            return module
        first = parts[0]
        if first in module.functions and len(parts) == 1:
            return module.functions[first]
        if first in module.classes:
            cls = module.classes[first]
            if len(parts) == 1:
                return cls
            if len(parts) == 2:
                return cls.method(parts[1])
            return None
        if first in module.imports:
            return self.lookup(".".join([module.imports[first], *parts[1:]]), depth + 1)
        return None

    def path_val(self, path: str) -> Val:
        """The kind of an importable path: a linted function or class, else the path itself."""
        found = self.lookup(path)
        if isinstance(found, FunctionRef):
            return Val(v.FUNC, ref=found)
        if isinstance(found, ClassInfo):
            return Val(v.CLASS, ref=found)
        return Val(v.PATH, origin=path)

    def targets_in(self, module: ModuleInfo, name: str | None) -> tuple[list[FunctionRef], list[FunctionRef]]:
        """The targets one module holds: ``(functions, methods)``.

        With no name, the functions marked ``@launchprof.target`` (as functions). A name
        is ``fn``, ``Class.method``, ``instance.method`` or ``module:qualname``; a bare
        name gives module-level functions, and methods of that name as a fallback the
        caller uses only when no module has such a function.
        """
        if name is None:
            return [f for f in module.all_functions() if f.is_target], []
        mod_part, sep, qual = name.rpartition(":")
        if sep and not module_matches(module, mod_part):
            return [], []
        ref = _find_qualname(module, qual)
        if ref is not None:
            return [ref], []
        if "." in qual:
            return [], []
        return [], [c.methods[qual] for c in module.classes.values() if qual in c.methods]


def unknown_target(name: str, modules_seen: bool, known: set[str]) -> UsageError:
    """The usage error for a ``--target`` that names nothing, with close names as a hint."""
    mod_part, sep, qual = name.rpartition(":")
    if sep and not modules_seen:
        return UsageError(f"unknown target {name!r}: no module {mod_part!r} among the linted files")
    close = difflib.get_close_matches(qual, sorted(known), n=3)
    if close:
        hint = f"; did you mean {', '.join(close)}?"
    elif known:  # as analyze's error lists the script's names
        names = sorted(known)
        more = f" and {len(names) - MAX_NAMES_SHOWN} more" if len(names) > MAX_NAMES_SHOWN else ""
        hint = f" (functions there: {', '.join(names[:MAX_NAMES_SHOWN])}{more})"
    else:
        hint = ""
    return UsageError(f"unknown target {name!r}: no such function or method in the linted files{hint}")


def module_matches(module: ModuleInfo, name: str) -> bool:
    stem = Path(module.source.path).stem
    return module.name == name or module.name.endswith("." + name) or stem == name or module.source.path == name


def _find_qualname(module: ModuleInfo, qual: str) -> FunctionRef | None:
    head, _, rest = qual.partition(".")
    if not rest:
        return module.functions.get(head)
    if head in module.classes and "." not in rest:
        return module.classes[head].method(rest)
    val = module.global_val(head)  # `model.forward` where `model = Net()`
    if val is not None and val.kind == v.INSTANCE and "." not in rest:
        return val.ref.method(rest)  # type: ignore[union-attr]
    return None
