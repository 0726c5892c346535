"""What the walker records about one function, for the rules to read.

Facts are plain data: the AST node (for the line and the message), and the kinds
(:class:`~launchprof.lint.values.Val`) the walker gave the values involved. A rule
needs nothing else, which keeps rules short and independent of how the walk is done.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from launchprof.lint.definitions import FunctionRef
from launchprof.lint.values import Val


@dataclass(frozen=True, slots=True)
class CallFact:
    """One call. ``path`` for ``torch.cuda.synchronize``-style calls, ``method`` for ``x.item()``."""

    node: ast.Call
    path: str | None
    method: str | None
    receiver: Val | None
    args: tuple[Val, ...]
    kwargs: dict[str, Val]


@dataclass(frozen=True, slots=True)
class Condition:
    """A device value used as a Python bool: ``if``, ``while``, ``assert``, ``and``, ``not`` ..."""

    node: ast.expr
    construct: str
    val: Val


@dataclass(frozen=True, slots=True)
class Arith:
    """A Python number from an argument meets a tensor in an operator (``x * scale``)."""

    node: ast.BinOp | ast.AugAssign
    number: Val


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """Stream bookkeeping, keyed by the stream's (or event's) source text.

    ``fork`` (``side.wait_stream(current)``), ``fork-event`` (``side.wait_event(e)``; a fork
    when ``e`` was recorded on the current stream), ``block`` (``with torch.cuda.stream(side)``),
    ``join``/``join-event`` (the current stream waits on a stream/event), ``record``
    (event ``key`` recorded on ``stream``; ``"current"`` for the current stream).
    """

    action: str
    key: str
    node: ast.AST
    stream: str | None = None


@dataclass(frozen=True, slots=True)
class ParamWrite:
    """``group["lr"] = value`` on an optimizer's ``param_groups`` entry (``key``: the setting)."""

    node: ast.Assign | ast.AugAssign
    key: str
    val: Val


@dataclass
class FunctionFacts:
    """Everything the rules need about one function, walked with one set of argument kinds."""

    ref: FunctionRef
    params: dict[str, Val]
    calls: list[CallFact] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    masks: list[ast.Subscript] = field(default_factory=list)
    arith: list[Arith] = field(default_factory=list)
    streams: list[StreamEvent] = field(default_factory=list)
    callees: list[tuple[FunctionRef, dict[str, Val]]] = field(default_factory=list)
    nested: list[FunctionRef] = field(default_factory=list)
    unresolved: list[tuple[ast.Call, str]] = field(default_factory=list)  # calls not followed, with why
    param_writes: list[ParamWrite] = field(default_factory=list)
    formats: list[ast.expr] = field(default_factory=list)  # f-strings and `%` that format a device tensor


def text(node: ast.AST, limit: int = 60) -> str:
    """Short source text of an expression, for messages."""
    s = ast.unparse(node)
    return s if len(s) <= limit else s[: limit - 3] + "..."
