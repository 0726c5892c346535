"""What every worker event record shares, and how a record marks a field it may leave out.

Records are stdlib dataclasses so that the worker, which runs inside the user's process,
imports no pydantic; the CLI validates the same classes with pydantic when it reads a run.
"""

from __future__ import annotations

import math
import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any, Union, ClassVar

# What a record's params (a note's, a finding's) may hold: JSON scalars and lists of them.
Scalar = Union[str, int, float, bool, None]
Param = Union[Scalar, list[Scalar]]

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


# Per record class: (field name, left out when None, written only when this holds).
_FIELDS: dict[type, tuple[tuple[str, bool, Any], ...]] = {}


def _fields_of(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    got = _FIELDS.get(cls)
    if got is None:
        got = _FIELDS[cls] = tuple((f.name, bool(f.metadata.get(OMIT)), f.metadata.get(WHEN)) for f in dataclasses.fields(cls))
    return got


def _clean(value: Any) -> Any:
    """Make values JSON-safe (records dicts, NaN/inf None, tuples lists, unknowns strings)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for name, omit, when in _fields_of(type(value)):
            v = getattr(value, name)
            if not (omit and v is None) and (when is None or when(value)):
                out[name] = _clean(v)
        return out
    return str(value)


def event_dict(record: Event) -> dict[str, Any]:
    """The record as its JSON line holds it, less the ``t`` the writer stamps: ``type``
    first, then its fields."""
    body = _clean(record)
    body.pop("t", None)
    return {"type": record.TYPE, **body}
