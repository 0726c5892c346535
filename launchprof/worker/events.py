"""Append-only JSON-lines event log: the worker's only channel back to the CLI.

Each event is one ``write`` + ``flush`` of a whole line, so the kernel has it even if
the process dies on the next instruction; a torn last line is skipped by the reader.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, TextIO


def _clean(value: Any) -> Any:
    """Make values JSON-safe (NaN/inf become None, tuples lists, unknowns strings)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


class EventWriter:
    def __init__(self, path: str) -> None:
        self._fh: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
        self._t0 = time.perf_counter()

    def write(self, type: str, **fields: Any) -> None:
        record = {"type": type, "t": round(time.perf_counter() - self._t0, 6), **fields}
        self._fh.write(json.dumps(_clean(record), separators=(",", ":")) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
