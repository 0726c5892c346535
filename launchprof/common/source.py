"""Reading the user's source: lines around a site, and the function that holds a line.

Torch-free, so both the worker and the CLI-side hazard rules use it. In the worker, files
are read from disk (``linecache``). During analysis, :func:`use_sources` installs the
sources stored in the run file, keyed by their name relative to the project root, so a
run recorded on a GPU machine reads the same code on a CI runner without the checkout.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import linecache
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

_SOURCES: ContextVar[Mapping[str, str] | None] = ContextVar("launchprof_sources", default=None)


@contextlib.contextmanager
def use_sources(sources: Mapping[str, str]) -> Iterator[None]:
    """Within the block, a file named in ``sources`` reads from there, not from disk."""
    token = _SOURCES.set(sources)
    try:
        yield
    finally:
        _SOURCES.reset(token)


def python_text(path: str | Path) -> str:
    """A Python file's text as ``python FILE`` reads it: a byte-order mark and a coding
    declaration (``# -*- coding: latin-1 -*-``) are honoured. OSError, or SyntaxError /
    UnicodeDecodeError for bytes Python would refuse too."""
    return importlib.util.decode_source(Path(path).read_bytes())


def decoded(data: bytes) -> str:
    """Stored source bytes as text, as :func:`python_text` reads them; bytes Python would
    refuse are still shown, undecodable ones replaced."""
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return data.decode("utf-8", "replace")


def lines_of(file: str) -> list[str]:
    """Every line of ``file`` (with newlines): the run's stored copy first, then the disk."""
    stored = _SOURCES.get()
    if stored is not None and file in stored:
        return stored[file].splitlines(keepends=True)
    return linecache.getlines(file)


def line_at(file: str, line: int) -> str:
    """One line of ``file`` (1-based), or "" when there is none."""
    lines = lines_of(file)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def around(file: str, line: int, context: int = 2) -> list[list[Any]]:
    """Source lines around ``line`` (``[[lineno, text], ...]``), kept in reports so they
    render where the file is absent (a CI runner re-rendering a GPU run's session)."""
    return [
        [n, line_at(file, n).rstrip("\n")]
        for n in range(max(1, line - context), line + context + 1)
        if line_at(file, n)
    ]


def parse_module(file: str | None) -> ast.Module | None:
    """The file's syntax tree, None when it has no source or does not parse."""
    source = "".join(lines_of(file)) if file else ""
    if not source:
        return None
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def function_at(file: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function whose ``def`` (or decorators) is at ``line``: what a code object's
    ``co_firstlineno`` points at."""
    tree = parse_module(file)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= line <= node.lineno:
                return node
    return None


def definition_line(file: str, line: int) -> int | None:
    """The ``def`` (or ``class``) line when ``line`` is one of its decorators or of its
    header (a code object's ``co_firstlineno`` of a decorated function is its first
    decorator's line); None for any other line. Nothing on such a line ran in the step,
    and a fix written for it would rewrite the signature."""
    tree = parse_module(file) if line else None
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            body = min([node.body[0].lineno] + [d.lineno for d in getattr(node.body[0], "decorator_list", [])])
            header_end = max(node.lineno, body - 1)
            if first <= line <= header_end:
                return node.lineno
    return None
