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
from launchprof.lint import values as v
from launchprof.lint.definitions import ClassInfo, FunctionRef
from launchprof.lint.files import SourceFile
from launchprof.lint.modules import ModuleInfo
from launchprof.lint.values import Val



class Index:
    """All modules of the linted files, and dotted-path lookup across them."""

    def __init__(self, sources: list[SourceFile]) -> None:
        self.modules: dict[str, ModuleInfo] = {}
        self.all_modules: list[ModuleInfo] = []
        for src in sources:
            info = ModuleInfo(src, self)
            self.all_modules.append(info)
            self.modules.setdefault(info.name, info)
        self._roots = {name.partition(".")[0] for name in self.modules}

    def lookup(self, path: str, depth: int = 0) -> FunctionRef | ClassInfo | ModuleInfo | None:
        """What a dotted path names in the linted files, following re-exports a few levels."""
        if depth > 4 or path.partition(".")[0] not in self._roots:
            return None
        if path in self.modules:
            return self.modules[path]
        mod_name, _, rest = path.rpartition(".")
        parts = [rest]
        while mod_name and mod_name not in self.modules:
            mod_name, _, head = mod_name.rpartition(".")
            parts.insert(0, head)
        if not mod_name:
            return None
        module = self.modules[mod_name]
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

    def marked_targets(self) -> list[FunctionRef]:
        return [f for m in self.all_modules for f in m.all_functions() if f.is_target]

    def resolve_target(self, name: str) -> list[FunctionRef]:
        """``fn``, ``Class.method``, ``instance.method`` or ``module:qualname`` -> functions.

        A bare name matches module-level functions first, then methods of that name.
        Every module that defines it contributes (two sample scripts may both have ``step``).
        """
        mod_part, sep, qual = name.rpartition(":")
        modules = self.all_modules
        if sep:
            modules = [m for m in modules if _module_matches(m, mod_part)]
            if not modules:
                raise UsageError(f"unknown target {name!r}: no module {mod_part!r} among the linted files")
        found = [ref for m in modules if (ref := _find_qualname(m, qual)) is not None]
        if not found and "." not in qual:
            found = [c.methods[qual] for m in modules for c in m.classes.values() if qual in c.methods]
        if not found:
            known = sorted({f.qualname for m in modules for f in m.all_functions()})
            close = difflib.get_close_matches(qual, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"unknown target {name!r}: no such function or method in the linted files{hint}")
        return found


def _module_matches(module: ModuleInfo, name: str) -> bool:
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
