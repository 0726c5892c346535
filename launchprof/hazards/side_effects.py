"""host-side-effect: Python work inside the target that replay will not repeat."""

from __future__ import annotations

from launchprof.run.evidence import Evidence
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import code_text, hazard
from launchprof.model.hazard_records import Hazard


def host_side_effects(ev: Evidence) -> list[Hazard]:
    out = []
    seen = set()
    for e in ev.probe.effects if ev.probe is not None else []:
        key = (e.file, e.line)
        if key in seen:
            continue
        seen.add(key)
        out.append(hazard("host-side-effect", HazardCode.HOST_SIDE_EFFECT, {"what": e.what, "code": code_text(e)}, e))
    return out
