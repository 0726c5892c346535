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

import launchprof.lint.values as v
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
    _return: Val | None = field(default=None, repr=False)

    def static_return(self) -> Val:
        """What calling this gives when it builds a model: ``def make(): return Net(...)``.

        Read from the return annotation or the ``return`` statements (a class instance or
        a torch module, directly or through one local name); anything else is unknown.
        """
        if self._return is None:
            self._return = v.V_UNKNOWN  # guards recursion through factories that call each other
            self._return = _built_model(self)
        return self._return

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
    def _self_writes(self) -> tuple[list[tuple[str, ast.expr | None]], frozenset[str]]:
        """``(attribute, value)`` for every ``self.X = value`` and registered buffer in the
        methods, and the attributes counted up or down by a number (``self.t += 1``).

        Only statements are visited (an attribute is set by a statement), which keeps this
        a small fraction of the cost of walking every expression of the class.
        """
        found: list[tuple[str, ast.expr | None]] = []
        counted: set[str] = set()
        for ref in self.methods.values():
            args = ref.node.args.posonlyargs + ref.node.args.args
            if not args:
                continue
            me = args[0].arg
            for node in _own_statements(ref.node):
                if isinstance(node, ast.Expr):
                    node = node.value  # type: ignore[assignment]
                name, value = _self_assignment(node, me)
                if name is not None:
                    found.append((name, value))
                elif isinstance(node, ast.AugAssign) and _counts_self(node, me):
                    counted.add(node.target.attr)  # type: ignore[union-attr]
        return found, frozenset(counted)

    @property
    def _assignments(self) -> list[tuple[str, ast.expr | None]]:
        return self._self_writes[0]

    @cached_property
    def _own_attrs(self) -> dict[str, Val]:
        """``self.X = ...`` and ``register_buffer("X", ...)`` anywhere in the class, by kind.

        Only kinds lint is sure of are kept (tensors, streams, modules, instances); the
        first sure assignment wins, ``self.x = None`` placeholders are ignored.
        """
        attrs: dict[str, Val] = {}
        for name, value in self._assignments:
            if name in attrs:
                continue
            val = v.V_TENSOR if value is None else self.module.static_val(value, host_ok=False)
            if val.kind != v.UNKNOWN:
                attrs[name] = val
        for name in self._self_writes[1]:
            if attrs.get(name) == v.V_LIT:  # a Python number counted on every call: `self.t = 0` ... `self.t += 1`
                attrs[name] = v.counter(name)
        return attrs

    def assigned_attrs(self) -> frozenset[str]:
        """Every ``self.X`` assigned in the class or its linted bases, whatever its kind."""
        return frozenset(name for c in self.mro() for name, _ in c._assignments)

    def attr(self, name: str) -> Val | None:
        for c in self.mro():
            found = c._own_attrs.get(name)
            if found is not None:
                return found
        return None


def _counts_self(node: ast.AugAssign, me: str) -> bool:
    """``self.t += 1`` (or ``-=``): an attribute counted by a number written in the code."""
    t = node.target
    return (
        isinstance(t, ast.Attribute)
        and isinstance(t.value, ast.Name)
        and t.value.id == me
        and isinstance(node.op, ast.Add | ast.Sub)
        and is_number_constant(node.value)
    )


def is_number_constant(e: ast.expr | None) -> bool:
    """``1``, ``-0.5``: a number written in the code (a bool is not one)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub | ast.UAdd):
        e = e.operand
    return isinstance(e, ast.Constant) and isinstance(e.value, int | float) and not isinstance(e.value, bool)


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



_MODEL_KINDS = frozenset({v.INSTANCE, v.TORCHMOD, v.MODULES})


def _built_model(ref: FunctionRef) -> Val:
    """The model a factory returns (see :meth:`FunctionRef.static_return`), else unknown."""
    module = ref.module
    if ref.node.returns is not None:
        val = module.static_val(ref.node.returns, host_ok=False)
        if val.kind in _MODEL_KINDS:
            return val
    assigned: dict[str, ast.expr] = {}
    for node in _own_statements(ref.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
        elif isinstance(node, ast.Return) and node.value is not None:
            expr = node.value
            if isinstance(expr, ast.Name) and expr.id in assigned:
                expr = assigned[expr.id]
            val = module.static_val(expr, host_ok=False)
            if val.kind in _MODEL_KINDS:
                return val
    return v.V_UNKNOWN


def _own_statements(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.stmt]:
    """The function's statements in order, not those of functions or classes defined inside it.

    Only the fields that hold statements are read (``body``, ``handlers``, ``orelse``,
    ``finalbody``, ``cases``, in the order every statement type declares them): looking
    at every child expression as well made this a tenth of lint's walk.
    """
    stack = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        inner: list[ast.stmt] = []
        for name in _STATEMENT_FIELDS:
            for child in getattr(node, name, ()):
                if isinstance(child, ast.stmt):
                    inner.append(child)
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    inner.extend(child.body)
        stack.extend(reversed(inner))


_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
