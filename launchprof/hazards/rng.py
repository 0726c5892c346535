"""rng-state: random numbers from a generator the graph does not know (numpy, random, custom)."""

from __future__ import annotations

from launchprof.evidence import Evidence
from launchprof.hazards.common import hazard
from launchprof.models import Hazard


def foreign_rng(ev: Evidence) -> list[Hazard]:
    out = []
    seen = set()
    for r in ev.probe.rng if ev.probe is not None else []:
        key = (r.file, r.line)
        if key in seen:
            continue
        seen.add(key)
        msg = f"{r.what if r.what is not None else 'random draw'} inside the target: replay repeats the numbers drawn at capture"
        out.append(hazard("rng-state", msg, r))
    return out
