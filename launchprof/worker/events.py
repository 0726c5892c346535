"""Append-only JSON-lines event log: the worker's only channel back to the CLI.

Each event is one ``write`` + ``flush`` of a whole line, so the kernel has it even if
the process dies on the next instruction; a torn last line is skipped by the reader.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from typing import Any, TextIO

from launchprof.events.base import OMIT, WHEN, Event

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


class EventWriter:
    def __init__(self, path: str) -> None:
        self._fh: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
        self._t0 = time.perf_counter()

    def write(self, record: Event) -> None:
        line = {"type": record.TYPE, "t": round(time.perf_counter() - self._t0, 6), **event_dict(record)}
        self._fh.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
