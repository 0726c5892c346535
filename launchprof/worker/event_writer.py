"""Append-only JSON-lines event log: the worker's only channel back to the CLI.

Each event is one ``write`` + ``flush`` of a whole line, so the kernel has it even if
the process dies on the next instruction; a torn last line is skipped by the reader.
"""

from __future__ import annotations

import json
import time
from typing import TextIO

from launchprof.events.record import Event
from launchprof.events.record import event_dict


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
