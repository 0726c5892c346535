"""What every worker event record shares, and how a record marks a field it may leave out.

Records are stdlib dataclasses so that the worker, which runs inside the user's process,
imports no pydantic; the CLI validates the same classes with pydantic when it reads a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any, ClassVar

OMIT = "omit_if_none"
WHEN = "written_when"


def omitted(default: Any = None) -> Any:
    """A field the worker writes only when it has a value: ``None`` leaves the key out of
    the JSON line, as the event log has always done for fields of some outcomes only."""
    return field(default=default, metadata={OMIT: True})


def written_when(test: Callable[[Any], bool], default: Any = None, default_factory: Any = MISSING) -> Any:
    """A field of one outcome of its event (a failed capture's ``message``): written, null
    included, when ``test(record)`` holds, and left out of the line otherwise."""
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata={WHEN: test})
    return field(default=default, metadata={WHEN: test})


@dataclass(frozen=True, kw_only=True)
class Event:
    """``t``: seconds since the worker started, set by the writer."""

    TYPE: ClassVar[str] = ""
    t: float | None = None


@dataclass(frozen=True, kw_only=True)
class Site:
    """A line of the user's code: where a call, a sync or an exception happened."""

    file: str | None = omitted()
    line: int | None = omitted()
    code: str | None = omitted()
    function: str | None = omitted()
    snippet: list[list[Any]] | None = omitted()  # [line, text] around it, for reports rendered where the file is absent
