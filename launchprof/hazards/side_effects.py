"""host-side-effect: Python work inside the target that replay will not repeat."""

from __future__ import annotations

from launchprof.evidence import Evidence
from launchprof.hazards.common import code_text, hazard
from launchprof.models import Hazard


def host_side_effects(ev: Evidence) -> list[Hazard]:
    out = []
    seen = set()
    for e in ev.probe.effects if ev.probe is not None else []:
        key = (e.file, e.line)
        if key in seen:
            continue
        seen.add(key)
        code = code_text(e)
        what = e.what if e.what is not None else "host work"
        msg = f"{what} (`{code}`) runs once at capture, never on replay" if code else f"{e.what} runs once at capture, never on replay"
        out.append(hazard("host-side-effect", msg, e))
    return out
