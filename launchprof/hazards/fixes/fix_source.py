"""The source a fix is written from: one line, the statement on it, the function around it.

Fixes are written from the user's own code, parsed with ``ast``; when a line does not parse
(a line of a multi-line statement) the writers say they cannot write the fix rather than
guess. Sources come from :mod:`launchprof.common.source`, so a run re-rendered on a CI runner reads
the code stored in the run file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from launchprof.model.hazard_identity import without_comment
from launchprof.common.source import line_at, parse_module

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class SourceLine:
    """One line of the user's code with what a fix writer needs around it."""

    file: str | None
    line: int | None
    code: str  # the line, stripped, without its comment
    indent: str
    stmt: ast.stmt | None  # the statement the line holds, when it parses alone
    module: ast.Module | None

    @property
    def function(self) -> FunctionNode | None:
        return enclosing_function(self.module, self.line) if self.module and self.line else None

    def node(self, kind: type[ast.AST]) -> ast.AST | None:
        """The statement of type ``kind`` that starts on this line, from the whole file's tree."""
        if self.module is None or self.line is None:
            return None
        for sub in ast.walk(self.module):
            if isinstance(sub, kind) and getattr(sub, "lineno", None) == self.line:
                return sub
        return None


def parse_statement(code: str) -> ast.stmt | None:
    """The single statement on one line; a compound header (``if x:``) gets a body to parse."""
    text = code.strip()
    if not text:
        return None
    for candidate in (text, text + " pass"):
        try:
            body = ast.parse(candidate).body
        except SyntaxError:
            continue
        if len(body) == 1:
            return body[0]
    return None


def enclosing_function(module: ast.Module | None, line: int | None) -> FunctionNode | None:
    """The innermost function whose body spans ``line``."""
    if module is None or line is None:
        return None
    best: FunctionNode | None = None
    for sub in ast.walk(module):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.lineno <= line <= (sub.end_lineno or sub.lineno):
            if best is None or sub.lineno >= best.lineno:
                best = sub
    return best


def source_line(file: str | None, line: int | None, code: str | None = None) -> SourceLine:
    """The line as stored in the run (or on disk), else the code recorded with the hazard."""
    raw = line_at(file, line) if file and line else ""
    text = without_comment(raw or code or "")
    indent = raw[: len(raw) - len(raw.lstrip())] if raw else ""
    return SourceLine(file, line, text, indent, parse_statement(text), parse_module(file))


def unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def call_name(node: ast.AST) -> str | None:
    """``f`` for ``f(...)``, ``meth`` for ``x.meth(...)``."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def dotted(node: ast.AST) -> str:
    """``torch.cuda.synchronize`` for an attribute chain, "" otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""
