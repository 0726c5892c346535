"""rng-state: random numbers from a generator the graph does not know (numpy, random, custom)."""

from __future__ import annotations

from launchprof.run.evidence import Evidence
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import hazard
from launchprof.model.hazard_records import Hazard


def foreign_rng(ev: Evidence) -> list[Hazard]:
    out = []
    seen = set()
    for r in ev.probe.rng if ev.probe is not None else []:
        key = (r.file, r.line)
        if key in seen:
            continue
        seen.add(key)
        out.append(hazard("rng-state", HazardCode.FOREIGN_RNG, {"what": r.what}, r))
    return out
