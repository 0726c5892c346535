"""Target names: ``step``, ``model.forward``, ``Net.forward``, ``pkg.mod:fn``.

Parsed in the CLI (a malformed name is a usage error before anything runs) and resolved
in the worker against the script's globals or an imported module.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchprof.common.source import python_text
from launchprof.errors import UsageError

# The module-level names an unknown-target error lists, at most.
MAX_NAMES_SHOWN = 8
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class TargetSpec:
    raw: str
    module: str | None  # set for ``pkg.mod:qualname``
    parts: tuple[str, ...]  # attribute path from the script's globals or the module


def parse_target(raw: str) -> TargetSpec:
    module, sep, rest = raw.partition(":")
    if sep:
        if not _DOTTED.match(module) or not _DOTTED.match(rest):
            raise UsageError(f"--target {raw!r} is not of the form pkg.module:function")
        return TargetSpec(raw=raw, module=module, parts=tuple(rest.split(".")))
    if not _DOTTED.match(raw):
        raise UsageError(f"--target {raw!r} is not a name: use step, model.forward, Net.forward or pkg.mod:fn")
    return TargetSpec(raw=raw, module=None, parts=tuple(raw.split(".")))


def top_level_names(source: str) -> set[str]:
    """Names a script binds anywhere in it (defs, classes, assignments, imports, loops), in a
    function body too: a name missing here cannot exist at run time, whatever the scope."""
    tree = ast.parse(source)
    names: set[str] = set()

    def bind(target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
                if alias.name == "*":
                    return set()  # star import: anything may be bound, check at run time
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr)):
            for target in getattr(node, "targets", []) or [getattr(node, "target", None)]:
                if target is not None:
                    bind(target)
            for item in getattr(node, "items", []):
                if item.optional_vars is not None:
                    bind(item.optional_vars)
        elif isinstance(node, ast.Global):
            names.update(node.names)
    return names


# Calls through which a module may bind names its source does not show.
_DYNAMIC_CALLS = frozenset({"globals", "vars", "exec", "__import__"})


@dataclass
class Bindings:
    """Where a module's source binds names: at module level (what the worker can reach in
    its globals) or only inside a function or class body (out of its reach)."""

    module: set[str]  # bound at module level, also inside if/for/with/try/match there
    defined: list[str]  # functions and classes defined at module level, in source order
    local: dict[str, tuple[str, int]]  # name bound only in a body -> (where, line), first seen
    dynamic: bool  # globals(), exec, sys.modules, a module __getattr__: bindings the source does not show


def bindings(source: str) -> Bindings:
    collector = _Collector()
    collector.visit(ast.parse(source), None)
    found = collector.found
    for name in found.module:
        found.local.pop(name, None)
    return found


class _Collector:
    """Python's scoping rules, as far as binding goes: a def, class or lambda body is a scope
    of its own; its decorators, defaults and bases belong to the scope around it."""

    def __init__(self) -> None:
        self.found = Bindings(module=set(), defined=[], local={}, dynamic=False)

    def bind(self, name: str, scope: str | None, line: int) -> None:
        if scope is None:
            self.found.module.add(name)
        else:
            self.found.local.setdefault(name, (scope, line))

    def visit(self, node: ast.AST, scope: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.definition(node, scope)
            return
        if isinstance(node, ast.Lambda):
            for part in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
                self.visit(part, scope)
            self.visit(node.body, "a lambda")
            return
        self.note(node, scope)
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: str | None) -> None:
        self.bind(node.name, scope, node.lineno)
        if scope is None:
            self.found.defined.append(node.name)
            self.found.dynamic |= node.name == "__getattr__"  # PEP 562: any attribute may exist
        if isinstance(node, ast.ClassDef):
            outer = [*node.bases, *(k.value for k in node.keywords)]
            inner = f"class {node.name}"
        else:
            outer = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            inner = f"{node.name}()"
        for part in (*node.decorator_list, *outer):
            self.visit(part, scope)
        for statement in node.body:
            self.visit(statement, inner)

    def note(self, node: ast.AST, scope: str | None) -> None:
        for name in _bound_here(node):
            self.bind(name, scope, getattr(node, "lineno", 0))
        if isinstance(node, ast.Global):
            self.found.module.update(node.names)  # bound at module level when that function runs
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            self.found.dynamic = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_CALLS:
            self.found.dynamic = True
        elif isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            self.found.dynamic = True


def _bound_here(node: ast.AST) -> list[str]:
    """Names this one node binds in the scope it sits in."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return [node.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def module_source(module: str, script: Path) -> Path | None:
    """The ``.py`` file that ``import module`` would load, with the script's folder first on
    the path as the worker has it; found without importing anything (a package's
    ``__init__`` is not run), None when it is not plain source or cannot be found."""
    import importlib.machinery

    top, *rest = module.split(".")
    spec = _find_top(top, script)
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    if spec is None or not spec.origin or not spec.origin.endswith(".py") or not os.path.isfile(spec.origin):
        return None
    return Path(spec.origin)


def check_target_statically(spec: TargetSpec, script: Path, source: str) -> None:
    """Reject a target the script cannot possibly define, before starting the worker.

    Only the first name is checked: it must exist in the module namespace the worker looks
    in (the script's globals, or the imported ``pkg.mod``). A name bound only inside a
    function body is local to it: no hook can reach it. Whenever the source cannot show
    every binding (a star import, ``globals()``, ``exec``, a module ``__getattr__``) the
    target is let through, so this never rejects one that could exist at run time.
    """
    if spec.module is not None:
        _check_module_target(spec, script)
        return
    names = top_level_names(source)
    if not names:
        return  # an empty script (or a star import): check_target_defined says so, or the run decides
    found = bindings(source)
    if spec.parts[0] not in names:
        close = sorted(n for n in names if n.lower() == spec.parts[0].lower() or spec.parts[0] in n)[:3]
        extra = f" (did you mean {', '.join(close)}?)" if close else _what_exists(spec.parts[0], found)
        raise UsageError(f"unknown target {spec.raw!r}: {script} never defines {spec.parts[0]!r}{extra}")
    _refuse_local(spec, str(script), found)


def _check_module_target(spec: TargetSpec, script: Path) -> None:
    """``pkg.mod:name``: the module is found, and defines ``name`` at its module level."""
    assert spec.module is not None
    top = spec.module.split(".")[0]
    if _find_top(top, script) is None:
        raise UsageError(f"unknown target {spec.raw!r}: no module named {top!r} (searched the script's folder and sys.path)")
    path = module_source(spec.module, script)
    if path is None:
        return
    try:
        found = bindings(python_text(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return  # the worker's import will say what is wrong with it
    first = spec.parts[0]
    if found.dynamic or first in found.module or _is_submodule(path, first):
        return
    shown = f"{path.parent.name}/{path.name}" if path.name == "__init__.py" else path.name
    if first not in found.local:
        raise UsageError(f"unknown target {spec.raw!r}: module {spec.module} ({shown}) defines no {first!r} at module level{_what_exists(first, found)}")
    _refuse_local(spec, shown, found)


def _refuse_local(spec: TargetSpec, where: str, found: Bindings) -> None:
    first = spec.parts[0]
    if found.dynamic or first in found.module or first not in found.local:
        return
    scope, line = found.local[first]
    owner = scope.removeprefix("class ")
    if owner != scope and owner in found.module:
        raise UsageError(f"unknown target {spec.raw!r}: {first!r} is defined in class {owner} ({where}:{line}): name it {owner}.{first}")
    raise UsageError(
        f"unknown target {spec.raw!r}: {first!r} is local to {scope} ({where}:{line}), where launchprof cannot reach it "
        f"(it looks for the target among the module's globals); make it a module-level name{_what_exists(first, found, suggest=False)}"
    )


def _what_exists(name: str, found: Bindings, suggest: bool = True) -> str:
    """The closest module-level names when ``suggest`` (a misspelling), else the module-level
    functions and classes, for the one-line error."""
    import difflib

    close = difflib.get_close_matches(name, found.defined, n=3) if suggest else []
    if close:
        return f" (did you mean {', '.join(close)}?)"
    public = [n for n in found.defined if not n.startswith("_")]
    if not public:
        return " (it defines no public function or class at module level)"
    shown = public[:MAX_NAMES_SHOWN]
    more = f" and {len(public) - len(shown)} more" if len(public) > len(shown) else ""
    return f" (module-level functions and classes: {', '.join(shown)}{more})"


def _find_top(top: str, script: Path) -> Any:
    """The import spec of top-level module ``top`` as the worker finds it (the script's folder
    first on the path); None when there is none. Finding a top-level module runs no code."""
    import importlib.util
    import sys

    sys.path.insert(0, str(script.resolve().parent))
    try:
        return importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    finally:
        sys.path.pop(0)


def _is_submodule(path: Path, name: str) -> bool:
    """``pkg:sub.fn`` where ``sub`` is a module of package ``pkg``."""
    if path.name != "__init__.py":
        return False
    folder = path.parent
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()
