"""What a function's source can do to state outside it: the attribute and variable writes,
prints, logging calls and foreign random draws the probe looks for in each function the
call ran.

A profile hook sees calls, not assignments, so writes are read from the source of the
functions that ran; which object each write lands on is known only at run time
(:mod:`launchprof.worker.probe_effects`). Each file is parsed once per probe, however many
of its functions run: a model's library files are large.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from types import CodeType

from launchprof.common.source import lines_of

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_LOGGER_NAMES = ("logging", "logger", "log", "LOGGER", "LOG")


@dataclass(frozen=True)
class AttrWrite:
    """``<name>.<attr> = …`` where ``name`` is a parameter (``self`` first of all) or a
    variable of an enclosing function, never rebound here: the object is known on entry."""

    name: str
    attr: str
    line: int


@dataclass(frozen=True)
class NameWrite:
    """A write to a variable declared ``global`` or ``nonlocal``."""

    name: str
    line: int
    scope: str  # "global" or "nonlocal"


@dataclass(frozen=True)
class Spoken:
    """print() or a logging call: output replay does not repeat."""

    what: str
    line: int


@dataclass(frozen=True)
class Called:
    """A call through an attribute chain (``np.random.normal``), resolved against the
    function's globals afterwards to tell a foreign random draw."""

    func: ast.expr
    line: int


@dataclass(frozen=True)
class CodeScan:
    attrs: tuple[AttrWrite, ...] = ()
    names: tuple[NameWrite, ...] = ()
    spoken: tuple[Spoken, ...] = ()
    calls: tuple[Called, ...] = ()

    def __post_init__(self) -> None:
        at: dict[int, set[str]] = {}
        for a in self.attrs:
            at.setdefault(a.line, set()).add(a.name)
        object.__setattr__(self, "holders", frozenset(a.name for a in self.attrs))
        object.__setattr__(self, "attr_lines", {line: frozenset(n) for line, n in at.items()})
        object.__setattr__(self, "other_lines", frozenset(x.line for x in (*self.names, *self.spoken, *self.calls)))
        object.__setattr__(self, "empty", not (self.attrs or self.names or self.spoken or self.calls))

    # Derived once, read on every call and every traced line.
    holders: frozenset[str] = field(init=False)  # the names written through: their objects are noted
    attr_lines: dict[int, frozenset[str]] = field(init=False)  # line -> the names written through there
    other_lines: frozenset[int] = field(init=False)  # lines of the other findings
    empty: bool = field(init=False)


class Scanner:
    """Scans of the functions that ran, each file parsed once."""

    def __init__(self) -> None:
        self._files: dict[str, dict[int, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self._codes: dict[CodeType, CodeScan] = {}

    def scan(self, code: CodeType) -> CodeScan:
        got = self._codes.get(code)
        if got is None:
            node = self.function(code)
            # A module's or class's body, a lambda or comprehension on a ``def`` line: not that function.
            same = node is not None and node.name == code.co_name
            got = self._codes[code] = scan_function(node, code.co_freevars) if same else CodeScan()
        return got

    def function(self, code: CodeType) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        index = self._files.get(code.co_filename)
        if index is None:
            index = self._files[code.co_filename] = _functions_of(code.co_filename)
        return index.get(code.co_firstlineno)


def _functions_of(file: str) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of ``file`` by the line a code object names it by (its first decorator's,
    else its ``def``'s)."""
    source = "".join(lines_of(file))
    if not source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    index: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            index.setdefault(min([node.lineno] + [d.lineno for d in node.decorator_list]), node)
            index.setdefault(node.lineno, node)
    return index


def own_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of ``func``'s own body: a nested function, lambda or class is code of its
    own, scanned when it runs, with its own ``self``."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [*func.body]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(child)
    return out


def scan_function(func: ast.FunctionDef | ast.AsyncFunctionDef, free: tuple[str, ...] = ()) -> CodeScan:
    nodes = own_nodes(func)
    scopes: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Global):
            scopes.update(dict.fromkeys(node.names, "global"))
        elif isinstance(node, ast.Nonlocal):
            scopes.update(dict.fromkeys(node.names, "nonlocal"))
    rebound = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    args = func.args
    known = ({a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} | set(free)) - rebound - set(scopes)
    attrs: list[AttrWrite] = []
    names: list[NameWrite] = []
    spoken: list[Spoken] = []
    calls: list[Called] = []
    for node in nodes:
        if isinstance(node, ast.Call):
            what = printing_call(node)
            if what:
                spoken.append(Spoken(what, node.lineno))
            elif isinstance(node.func, ast.Attribute):
                calls.append(Called(node.func, node.lineno))
            continue
        for target in _targets(node):
            if isinstance(target, ast.Name) and target.id in scopes:
                names.append(NameWrite(target.id, node.lineno, scopes[target.id]))
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in known:
                attrs.append(AttrWrite(target.value.id, target.attr, node.lineno))
    return CodeScan(tuple(attrs), tuple(names), tuple(spoken), tuple(calls))


def _targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment, augmented or annotated assignment, or ``del`` writes, tuples unpacked."""
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, ast.AugAssign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
        found = [node.target]
    elif isinstance(node, ast.Delete):
        found = list(node.targets)
    else:
        return []
    out: list[ast.expr] = []
    while found:
        t = found.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            found.extend(t.elts)
        elif isinstance(t, ast.Starred):
            found.append(t.value)
        else:
            out.append(t)
    return out


def printing_call(call: ast.Call) -> str | None:
    """print(...) and logging calls: they run once, at capture, never on replay."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "print":
        return "print()"
    if (
        isinstance(func, ast.Attribute)
        and func.attr in LOG_METHODS
        and isinstance(func.value, ast.Name)
        and (func.value.id in _LOGGER_NAMES or func.value.id.endswith("logger"))
    ):
        return f"logging .{func.attr}()"
    return None
