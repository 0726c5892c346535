"""How a finding names a side stream: by the variable the user's code enters it with
(``with torch.cuda.stream(side):`` around the access), else by its place in the order of
first use ("side stream 1", "side stream 2"). The raw stream id (a CUDA stream handle such
as 540883312) means nothing to the user: it stays in the hazard's params as data only."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from launchprof.common.source import lines_of
from launchprof.events.capture_events import RaceAccess, RaceCheckEvent

_ENTERS = ("stream", "StreamContext")  # torch.cuda.stream(s), torch.cuda.StreamContext(s)


def _module(file: str) -> ast.Module | None:
    source = "".join(lines_of(file)) if file else ""
    try:
        return ast.parse(source) if source else None
    except SyntaxError:
        return None


def _entered(item: ast.withitem) -> str | None:
    """``side`` of ``torch.cuda.stream(side)``; None for any other context manager."""
    call = item.context_expr
    if not isinstance(call, ast.Call) or not call.args:
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    arg = call.args[0]
    if name in _ENTERS and isinstance(arg, (ast.Name, ast.Attribute)):
        return ast.unparse(arg)
    return None


def stream_variable(file: str | None, line: int | None) -> str | None:
    """The stream variable of the innermost ``with torch.cuda.stream(...)`` around ``line``."""
    module = _module(str(file or ""))
    if module is None or not line:
        return None
    best: tuple[int, str] | None = None
    for node in ast.walk(module):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body and node.body[0].lineno <= line <= (node.end_lineno or node.lineno):
            name = next((n for n in map(_entered, node.items) if n), None)
            if name and (best is None or node.lineno > best[0]):
                best = (node.lineno, name)
    return best[1] if best else None


def side_streams(rc: RaceCheckEvent, accesses: Iterable[RaceAccess]) -> dict[int, tuple[int, str | None]]:
    """Each side stream's (number, variable): numbered 1, 2, ... in the order the checked
    call first used them, named by the first access whose line sits in a ``with`` for it."""
    order: list[int] = []
    seen = [op.stream for op in rc.ops] + [a.stream for a in accesses]
    for stream in seen:
        if stream is not None and stream != rc.origin_stream and stream not in order:
            order.append(stream)
    names: dict[int, str] = {}
    for a in accesses:
        if a.stream is not None and a.stream not in names:
            name = stream_variable(a.file, a.line)
            if name:
                names[a.stream] = name
    return {s: (i, names.get(s)) for i, s in enumerate(order, 1)}
