"""Does the eager step's time differ between the calls it was timed on?

The bursts cycle through a few recorded argument sets (worker/burst.py: sample j of a kind
used set j % n, and ``timing-start`` says n). A step that branches on its arguments (a
Python int, a flag, a shape) takes a different path, and a different time, on different
sets. The median over all samples then mixes two or more steps, and matches none of them:
a direct loop on one call's arguments measures one path only. This splits the samples by
set and says so when the sets differ both significantly (Kruskal-Wallis, pyperf's rule:
significance before "changed") and by enough to matter. The sets are timed in turn, an
even number of calls per burst, so set and call parity coincide: a step that branches on
a call counter (every second call) looks the same, and the note says both.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note

# Sets must differ by this factor (slowest set median over fastest) to be reported.
MIN_RATIO = 1.3
# And significantly: a Kruskal-Wallis p-value below this.
MAX_P = 0.001
# Fewer samples per set than this say nothing.
MIN_PER_SET = 5


@dataclass(frozen=True)
class ArgumentSpread:
    kind: str
    set_medians_us: list[float]
    p_value: float

    @property
    def ratio(self) -> float:
        return max(self.set_medians_us) / min(self.set_medians_us)


def sets_of(ev: Evidence, kind: str) -> int | None:
    """How many argument sets the last bursts of ``kind`` cycled through (None: not recorded)."""
    for start in reversed(ev.timing_starts):
        if start.sets is not None and kind in start.sets:
            return start.sets[kind]
    return None


def per_set(samples: list[float], sets: int) -> list[list[float]]:
    return [samples[i::sets] for i in range(sets)]


def argument_spread(ev: Evidence, kind: str = "eager") -> ArgumentSpread | None:
    """The per-set medians of ``kind`` when its time depends on the argument set, else None.
    The test comes after the cheap ratio check: importing scipy.stats costs about 1 s, and
    most steps take one path."""
    sets, samples = sets_of(ev, kind), ev.burst_wall_us.get(kind) or []
    if sets is None or sets < 2 or len(samples) < sets * MIN_PER_SET:
        return None
    groups = per_set(list(samples), sets)
    medians = [float(statistics.median(g)) for g in groups]
    if min(medians) <= 0 or max(medians) / min(medians) < MIN_RATIO:
        return None
    from scipy.stats import kruskal

    p = float(kruskal(*groups).pvalue)
    return ArgumentSpread(kind, medians, p) if p < MAX_P else None


def argument_notes(ev: Evidence) -> list[Note]:
    """One report note for an eager step whose time depends on its arguments."""
    spread = argument_spread(ev)
    if spread is None:
        return []
    mixed = float(statistics.median(ev.burst_wall_us["eager"]))
    return [note(NoteCode.ARGUMENT_SPREAD, set_medians_us=spread.set_medians_us, ratio=spread.ratio, p_value=spread.p_value, mixed_us=mixed)]
