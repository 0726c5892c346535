"""Where a sweep's measurements go: raw series, notes, progress; and the guard around each one.

Robustness is the point: each measurement runs guarded, so a failure becomes a one-line
note and the sweep goes on; Ctrl-C is never swallowed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from launchprof.crossover.profile import Series


class ProgressSink(Protocol):
    """Where the sweep reports progress; the command draws it, the sweep does not."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, name: str, steps: int = 1) -> None: ...

    def done(self, name: str) -> None: ...


class NoProgress:
    """A sink that draws nothing (tests, and callers that report progress their own way)."""

    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, name: str, steps: int = 1) -> None:
        pass

    def done(self, name: str) -> None:
        pass


@dataclass
class Recorder:
    """The raw series and notes of one sweep; ``round`` tags the host round being measured."""

    progress: ProgressSink
    samples: list[Series] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    current: str = "start-up"
    round: int | None = None

    def add(self, kind: str, count: int, values: Sequence[float], kernel_us: float | None = None) -> None:
        clean = tuple(float(v) for v in values if v is not None and math.isfinite(v))
        if clean:
            self.samples.append(Series(kind=kind, count=int(count), values_us=clean, kernel_us=kernel_us, round=self.round))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def caused_by_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` was raised while a Ctrl-C unwound (e.g. capture_end in __exit__)."""
    seen = exc.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


def guarded(rec: Recorder, what: str, fn: Callable[[], None]) -> bool:
    """Run one measurement; a failure becomes a note (one line), never the end of the sweep."""
    try:
        fn()
        return True
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if caused_by_interrupt(exc):
            raise KeyboardInterrupt from exc
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        rec.note(f"{what} failed: {type(exc).__name__}: {first}")
        return False
