"""What one module defines at its top level, and what its names stand for.

A :class:`ModuleInfo` is built once per parsed file: its imports (local name ->
dotted path, relative imports resolved), functions, classes and module globals.
It answers "what is this name or dotted expression" for the walker, through the
index that holds every module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

import launchprof.lint.values as v
from launchprof.lint.definitions import ClassInfo, FunctionRef
from launchprof.lint.files import SourceFile
from launchprof.lint.values import Val

if TYPE_CHECKING:
    from launchprof.lint.index import Index

TARGET_DECORATOR = "launchprof.target"


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
        self.replaced: list[ClassInfo] = []  # classes defined again under the same name (see engine._break_cycles)
        self._scan(source.tree.body)

    def _scan(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.imports.update(import_names(node, self.name, self.source.is_package))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name] = FunctionRef(self, node.name, node, None, self.is_marked(node))
            elif isinstance(node, ast.ClassDef):
                if node.name in self.classes:
                    self.replaced.append(self.classes[node.name])
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
        written = v.dotted_name(expr)
        if written is None:
            return None
        head, dot, rest = written.partition(".")
        root = self.imports.get(head)
        if root is None:
            root = f"{self.name}.{head}" if head in self.functions or head in self.classes else head
        return root + dot + rest

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
        if isinstance(found, FunctionRef):  # model = build_model(cfg)
            return found.static_return()
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


