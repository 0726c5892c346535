"""Usage checks for ``analyze`` that need no GPU, run before the environment is looked at.

A user mistake must cost a second and exit 2 on any machine, not exit 4 on a laptop and
a minute of GPU time on a workstation. Every check here proves a mistake from the files
alone and stays silent when it cannot be sure (a star import, a metaclass, a decorator
that may add attributes): a false "unknown target" would block a valid run.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import os
import stat
from pathlib import Path

from launchprof.errors import UsageError
from launchprof.fileio.input_files import check_input_file
from launchprof.fileio.output_files import probe_folder
from launchprof.common.source import python_text
from launchprof.common.targets import TargetSpec, module_source, top_level_names


SAVED_SUFFIXES = {".json": "JSON file (a report or a device profile)", ".lprun": "run file"}


def check_script(path: Path) -> str:
    """The script's source; a missing, non-regular, unreadable or invalid file is exit 2.

    A FIFO or device named ``x.py`` is refused before it is opened: reading one blocks
    until a writer comes, which would hang the command with nothing on screen."""
    check_input_file(path, "the Python script to run", f"script not found: {path}")
    if path.suffix.lower() in SAVED_SUFFIXES:  # a JSON report parses as Python (one dict literal)
        raise UsageError(f"{path} is a saved {SAVED_SUFFIXES[path.suffix.lower()]}, not a Python script: a report or run reads with `launchprof report FILE`")
    try:
        source = python_text(path)
        ast.parse(source, filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except SyntaxError as exc:  # in the code, or a coding declaration Python does not know
        raise UsageError(f"{path}:{exc.lineno or 1}: syntax error: {exc.msg}") from None
    return source


def _has_star_import(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree))


def check_target_defined(spec: TargetSpec, script: Path, source: str) -> None:
    """An empty script, or ``Class.method`` a class cannot have, in the script or in the
    ``pkg.mod`` of ``pkg.mod:Class.method`` (read, never imported)."""
    if spec.module is not None:
        found = module_source(spec.module, script)
        try:
            source = python_text(found) if found is not None else ""
            tree = ast.parse(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            return  # the worker's import says what is wrong with it
        if source and not _has_star_import(tree) and len(spec.parts) >= 2:
            missing = _missing_class_attribute(tree, spec.parts[0], spec.parts[1])
            if missing:
                raise UsageError(f"unknown target {spec.raw!r}: {missing}")
        return
    tree = ast.parse(source)
    if _has_star_import(tree):
        return
    if not top_level_names(source):
        raise UsageError(f"unknown target {spec.raw!r}: {script} defines nothing at module level")
    if len(spec.parts) >= 2:
        missing = _missing_class_attribute(tree, spec.parts[0], spec.parts[1])
        if missing:
            raise UsageError(f"unknown target {spec.raw!r}: {missing}")


def _top_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _rebound(tree: ast.Module, name: str) -> bool:
    """True when ``name`` is bound other than by its class statement, or patched later
    (``Name.attr = ...``, ``setattr(Name, ...)``): then the class body is not the whole story."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = getattr(node, "targets", None) or [node.target]  # type: ignore[attr-defined]
            for t in targets:
                if isinstance(t, ast.Name) and t.id == name:
                    return True
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name:
                    return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _body_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in getattr(node, "targets", None) or [node.target]:  # type: ignore[attr-defined]
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _missing_class_attribute(tree: ast.Module, cls_name: str, attr: str) -> str | None:
    """Why ``cls_name.attr`` cannot exist, or None when it may (or when unsure)."""
    classes = _top_classes(tree)
    if cls_name not in classes or _rebound(tree, cls_name):
        return None
    seen: set[str] = set()
    todo = [cls_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        cls = classes[name]
        if cls.decorator_list or cls.keywords:  # may add attributes or change lookup
            return None
        if attr in _body_names(cls):
            return None
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and not _rebound(tree, base.id):
                todo.append(base.id)
                continue
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            found = _external_has(tree, base, attr)
            if found is not False:
                return None
    close = difflib.get_close_matches(attr, sorted({n for c in seen for n in _body_names(classes[c])}), n=3)
    hint = f" (did you mean {', '.join(cls_name + '.' + n for n in close)}?)" if close else ""
    return f"class {cls_name} has no attribute {attr!r}{hint}"


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> full dotted name, for the script's top-level imports."""
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _external_has(tree: ast.Module, base: ast.expr, attr: str) -> bool | None:
    """Whether an imported base class has ``attr``; None when it cannot be resolved.

    Only installed packages are imported (torch, typically), never the user's own
    modules: importing those would run their code before the run."""
    dotted = _dotted(base)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    full = _import_aliases(tree).get(head)
    if full is None:
        return None
    full = f"{full}.{rest}" if rest else full
    module_name, _, qual = full.rpartition(".")
    if not module_name or module_name.split(".")[0] not in ("torch", "typing", "abc", "collections", "enum"):
        return None
    try:
        obj = importlib.import_module(module_name)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except Exception:
        return None
    return hasattr(obj, attr)


def check_output_creatable(path: Path) -> None:
    """Prove that a new output file can be created, by creating and removing one beside it.

    ``os.access`` says yes to root everywhere, also in ``/proc`` or on a read-only mount;
    only a real attempt shows that the report could be written after the run."""
    if os.path.exists(path):  # os.path's: False, not a PermissionError, in a folder we may not look into
        return
    probe_folder(Path(os.path.realpath(path)).parent, path)


def check_project_root(path: Path | None) -> None:
    """``--project-root`` names an existing folder, for every command that takes it.

    Paths in a report are made relative to it and lint follows imports inside it: a
    mistyped folder would silently give absolute paths or unfollowed calls, so it is a
    usage error, said the same way by analyze, lint and report."""
    if path is None:
        return
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise UsageError(f"--project-root {path}: no such folder") from None
    except OSError as exc:
        raise UsageError(f"--project-root {path}: cannot look at it: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        raise UsageError(f"--project-root {path} is a file, not a folder: give the folder that holds the project")
    if not stat.S_ISDIR(mode):
        raise UsageError(f"--project-root {path} is not a folder")


COMPARE_CHOICES = ("compile",)


COMPILE_TIMEOUT_S = 300.0  # --compile-timeout's default


def check_compare(values: tuple[str, ...] | list[str], compile_rounds: int = 1, compile_timeout: float = COMPILE_TIMEOUT_S) -> None:
    """``--compare`` takes known comparisons only (``compile``); ``--compile-rounds`` above 1
    and a ``--compile-timeout`` of its own mean nothing without ``--compare compile``, so they
    are refused rather than ignored."""
    for value in values:
        if value not in COMPARE_CHOICES:
            raise UsageError(f"unknown --compare value {value!r} (choose from: {', '.join(COMPARE_CHOICES)})")
    if compile_rounds != 1 and "compile" not in values:
        raise UsageError(f"--compile-rounds {compile_rounds} needs --compare compile")
    if compile_timeout != COMPILE_TIMEOUT_S and "compile" not in values:
        raise UsageError(f"--compile-timeout {compile_timeout:g} needs --compare compile")
