"""Reading the user's source: lines around a site, and the function that holds a line.

Torch-free, so both the worker and the CLI-side hazard rules use it.
"""

from __future__ import annotations

import ast
import linecache
from typing import Any


def around(file: str, line: int, context: int = 2) -> list[list[Any]]:
    """Source lines around ``line`` (``[[lineno, text], ...]``), kept in reports so they
    render where the file is absent (a CI runner re-rendering a GPU run's session)."""
    return [
        [n, linecache.getline(file, n).rstrip("\n")]
        for n in range(max(1, line - context), line + context + 1)
        if linecache.getline(file, n)
    ]


def function_at(file: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function whose ``def`` (or decorators) is at ``line``: what a code object's
    ``co_firstlineno`` points at."""
    source = "".join(linecache.getlines(file))
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= line <= node.lineno:
                return node
    return None
