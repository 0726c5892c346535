"""Target names: ``step``, ``model.forward``, ``Net.forward``, ``pkg.mod:fn``.

Parsed in the CLI (a malformed name is a usage error before anything runs) and resolved
in the worker against the script's globals or an imported module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from launchprof.errors import UsageError

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
    """Names a script binds at module level (defs, classes, assignments, imports, loops)."""
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


def check_target_statically(spec: TargetSpec, script: Path, source: str) -> None:
    """Reject a target the script cannot possibly define, before starting the worker.

    Only the first name is checked, and only for script targets: anything the script
    binds anywhere counts, so this never rejects a target that could exist at run time.
    """
    if spec.module is not None:
        import importlib.util
        import sys

        top = spec.module.split(".")[0]
        sys.path.insert(0, str(script.resolve().parent))
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        finally:
            sys.path.pop(0)
        if not found:
            raise UsageError(f"unknown target {spec.raw!r}: no module named {top!r} (searched the script's folder and sys.path)")
        return
    names = top_level_names(source)
    if names and spec.parts[0] not in names:
        close = sorted(n for n in names if n.lower() == spec.parts[0].lower() or spec.parts[0] in n)[:3]
        extra = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"unknown target {spec.raw!r}: {script} never defines {spec.parts[0]!r}{extra}")
