"""Functions and classes of the linted code: what a call of one can lead to.

A :class:`FunctionRef` is one definition (its identity is the AST node); a
:class:`ClassInfo` knows its methods, its bases among the linted modules, whether it
is a torch ``nn.Module`` and what its ``self.X`` attributes hold.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from launchprof.lint import values as v
from launchprof.lint.values import Val

if TYPE_CHECKING:
    from launchprof.lint.modules import ModuleInfo


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

