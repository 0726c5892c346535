"""Files, modules, classes and functions of the linted tree, and how names resolve in it.

Lint follows calls from a target into the functions it calls, so it needs to know,
for every given file, what the file defines and what each imported name stands for.
This module builds that index once (each file is parsed once, the index is a few
dicts per module) and answers two questions: which functions are the targets, and
which function a name or dotted path means.
"""

from __future__ import annotations

import ast
import difflib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from launchprof.errors import UsageError
from launchprof.lint import values as v
from launchprof.lint.values import Val

TARGET_DECORATOR = "launchprof.target"
# Folders that hold no user code: caches and installed packages (and any folder with a pyvenv.cfg).
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv"})


# --- files ----------------------------------------------------------------------


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


# --- what a file defines ------------------------------------------------------------


@dataclass(eq=False)
class FunctionRef:
    """A function or method in the linted files; identity is the definition."""

    module: ModuleInfo
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ClassInfo | None = None
    is_target: bool = False

    @property
    def is_method(self) -> bool:
        """Called with ``self`` (or ``cls``) first: a method that is not a staticmethod."""
        if self.cls is None:
            return False
        return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in self.node.decorator_list)

    @property
    def display(self) -> str:
        return f"{self.module.name}:{self.qualname}"


@dataclass(eq=False)
class ClassInfo:
    module: ModuleInfo
    name: str
    node: ast.ClassDef
    methods: dict[str, FunctionRef] = field(default_factory=dict)

    @cached_property
    def bases(self) -> list[ClassInfo | str]:
        """Base classes: a ClassInfo where the base is in the linted files, else its dotted path."""
        out: list[ClassInfo | str] = []
        for b in self.node.bases:
            path = self.module.static_path(b)
            if path is None:
                continue
            found = self.module.index.lookup(path)
            out.append(found if isinstance(found, ClassInfo) else path)
        return out

    def mro(self) -> Iterator[ClassInfo]:
        """This class, then its bases in the linted files, depth first, each once."""
        seen: set[int] = set()
        stack: list[ClassInfo] = [self]
        while stack:
            c = stack.pop(0)
            if id(c) in seen:
                continue
            seen.add(id(c))
            yield c
            stack[0:0] = [b for b in c.bases if isinstance(b, ClassInfo)]

    def method(self, name: str) -> FunctionRef | None:
        for c in self.mro():
            if name in c.methods:
                return c.methods[name]
        return None

    @cached_property
    def is_module(self) -> bool:
        """A torch ``nn.Module`` (calling an instance runs ``forward``)."""
        for c in self.mro():
            for b in c.bases:
                if isinstance(b, str) and (b.endswith(".Module") or b == "Module"):
                    return True
        return False

    def call_method(self) -> FunctionRef | None:
        """What ``instance(...)`` runs: ``forward`` for an nn.Module, else ``__call__``."""
        return (self.method("forward") if self.is_module else None) or self.method("__call__")

    @cached_property
    def _own_attrs(self) -> dict[str, Val]:
        """``self.X = ...`` and ``register_buffer("X", ...)`` anywhere in the class, by kind.

        Only kinds lint is sure of are kept (tensors, streams, modules, instances); the
        first sure assignment wins, ``self.x = None`` placeholders are ignored.
        """
        attrs: dict[str, Val] = {}
        for ref in self.methods.values():
            args = ref.node.args.posonlyargs + ref.node.args.args
            if not args:
                continue
            me = args[0].arg
            for node in ast.walk(ref.node):
                name, value = _self_assignment(node, me)
                if name is None or name in attrs:
                    continue
                val = v.V_TENSOR if value is None else self.module.static_val(value, host_ok=False)
                if val.kind != v.UNKNOWN:
                    attrs[name] = val
        return attrs

    def attr(self, name: str) -> Val | None:
        for c in self.mro():
            found = c._own_attrs.get(name)
            if found is not None:
                return found
        return None


def _self_assignment(node: ast.AST, me: str) -> tuple[str | None, ast.expr | None]:
    """``(attribute, value)`` for ``self.X = value``; value None for a registered buffer or parameter."""
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                return t.attr, node.value
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("register_buffer", "register_parameter")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == me
        and len(node.args) >= 2
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value, None
    return None, None


class ModuleInfo:
    """What one file defines at module level: imports, functions, classes, globals."""

    def __init__(self, source: SourceFile, index: Index) -> None:
        self.source = source
        self.name = source.module
        self.index = index
        self.imports: dict[str, str] = {}
        self.functions: dict[str, FunctionRef] = {}
        self.classes: dict[str, ClassInfo] = {}
        self._global_exprs: dict[str, ast.expr] = {}
        self._global_vals: dict[str, Val | None] = {}
        self._scan(source.tree.body)

    def _scan(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.imports.update(import_names(node, self.name, self.source.is_package))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name] = FunctionRef(self, node.name, node, None, self.is_marked(node))
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = self._class(node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self._global_exprs[t.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                # `model: Decoder` (assigned later in main) says what the name holds as well as a value would.
                self._global_exprs[node.target.id] = node.value if node.value is not None else node.annotation
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for block in _blocks(node):
                    self._scan(block)

    def _class(self, node: ast.ClassDef) -> ClassInfo:
        info = ClassInfo(self, node.name, node)
        stack = list(node.body)
        while stack:
            item = stack.pop(0)
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                info.methods[item.name] = FunctionRef(self, f"{node.name}.{item.name}", item, info, self.is_marked(item))
            elif isinstance(item, ast.If | ast.Try):
                for block in _blocks(item):
                    stack.extend(block)
        return info

    def is_marked(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        return any(self.static_path(d) == TARGET_DECORATOR for d in node.decorator_list)

    def static_path(self, expr: ast.expr) -> str | None:
        """The dotted path a Name/Attribute chain stands for, through this module's imports."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        root = self.imports.get(expr.id)
        if root is None:
            root = f"{self.name}.{expr.id}" if expr.id in self.functions or expr.id in self.classes else expr.id
        return ".".join([root, *reversed(parts)])

    def global_val(self, name: str) -> Val | None:
        """What a module-level name is, as far as lint can tell (cached)."""
        if name in self._global_vals:
            return self._global_vals[name]
        val: Val | None = None
        if name in self.functions:
            val = Val(v.FUNC, ref=self.functions[name])
        elif name in self.classes:
            val = Val(v.CLASS, ref=self.classes[name])
        elif name in self.imports:
            val = self.index.path_val(self.imports[name])
        elif name in self._global_exprs:
            self._global_vals[name] = None  # guards a = b; b = a
            val = self.static_val(self._global_exprs[name], host_ok=True)
        self._global_vals[name] = val
        return val

    def static_val(self, expr: ast.expr, host_ok: bool) -> Val:
        """The kind of a module-level or attribute value, from its expression alone.

        ``host_ok``: a tensor built without ``device=`` is a host tensor (module globals);
        for class attributes it stays unknown, since ``model.to(device)`` may move it.
        """
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bool) or expr.value is None:
                return v.V_UNKNOWN
            return v.V_LIT if isinstance(expr.value, int | float) else v.V_UNKNOWN
        if isinstance(expr, ast.IfExp):  # `torch.cuda.Stream() if torch.cuda.is_available() else None`
            body, orelse = self.static_val(expr.body, host_ok), self.static_val(expr.orelse, host_ok)
            return body if body.kind != v.UNKNOWN else orelse
        if isinstance(expr, ast.Name | ast.Attribute):  # an annotation, or another global
            path = self.static_path(expr)
            found = self.index.lookup(path) if path else None
            if isinstance(found, ClassInfo):
                return Val(v.INSTANCE, ref=found)
            if path == "torch.nn.Module":
                return v.V_TORCHMOD
            if isinstance(expr, ast.Name) and expr.id in self._global_exprs:
                return self.global_val(expr.id) or v.V_UNKNOWN
            return v.V_UNKNOWN
        if not isinstance(expr, ast.Call):
            return v.V_UNKNOWN
        moved = False
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in v.SAME_MODULE_METHODS:
            moved = moved or expr.func.attr in ("cuda", "to")
            if not isinstance(expr.func.value, ast.Call):
                return v.V_UNKNOWN
            expr = expr.func.value
        path = self.static_path(expr.func)
        if path is None:
            return v.V_UNKNOWN
        found = self.index.lookup(path)
        if isinstance(found, ClassInfo):
            return Val(v.INSTANCE, ref=found)
        return self._static_torch(path, expr, moved, host_ok)

    def _static_torch(self, path: str, call: ast.Call, moved: bool, host_ok: bool) -> Val:
        if path in ("torch.nn.ModuleList", "torch.nn.Sequential"):
            classes = tuple(self._element_classes(call))
            return Val(v.MODULES, ref=classes) if classes else v.V_TORCHMOD
        made = v.torch_object(path)
        if made is not None:
            return made
        if path.startswith("torch.") and path[6:] in v.CREATION_FNS:
            if moved or v.device_keyword(call) == "device":
                return v.V_TENSOR
            return Val(v.HOST, origin=path) if host_ok else v.V_UNKNOWN
        return v.V_TENSOR if moved and path.startswith("torch.") else v.V_UNKNOWN

    def _element_classes(self, call: ast.Call) -> Iterator[ClassInfo]:
        items: list[ast.expr] = []
        for a in call.args:
            if isinstance(a, ast.List | ast.Tuple):
                items.extend(a.elts)
            elif isinstance(a, ast.ListComp | ast.GeneratorExp):
                items.append(a.elt)
            else:
                items.append(a)
        seen: set[int] = set()
        for item in items:
            val = self.static_val(item, host_ok=False)
            if val.kind == v.INSTANCE and id(val.ref) not in seen:
                seen.add(id(val.ref))
                yield val.ref  # type: ignore[misc]

    def all_functions(self) -> Iterator[FunctionRef]:
        yield from self.functions.values()
        for c in self.classes.values():
            yield from c.methods.values()


def _blocks(node: ast.If | ast.Try | ast.With) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    if isinstance(node, ast.With):
        return [node.body]
    return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]


def import_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> dotted path for one import statement (relative imports resolved)."""
    out: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out[alias.asname] = alias.name
            else:
                top = alias.name.partition(".")[0]
                out[top] = top
        return out
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if not is_package:
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join([*package, base] if base else package)
    for alias in node.names:
        if alias.name != "*":
            out[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return out


# --- the index ----------------------------------------------------------------------


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
