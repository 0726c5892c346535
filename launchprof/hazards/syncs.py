"""hidden-sync and pageable-copy (from the probe call), and what capture itself reported."""

from __future__ import annotations

import dataclasses

from launchprof.common.capture_causes import cause_of
from launchprof.events.observation_events import ProbeEntry, ProbeEvent
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import code_text, hazard, target_site
from launchprof.hazards.training import BUILDERS
from launchprof.model.hazard_records import Hazard


def hidden_syncs(ev: Evidence) -> list[Hazard]:
    """Every synchronising site the probe call hit, one finding per line."""
    out: list[Hazard] = []
    seen: set[tuple[str | None, int | None]] = set()
    syncs = list(ev.probe.syncs if ev.probe is not None else [])
    # A pageable copy warns as a sync too; one line, one finding, the more specific kind.
    pageable = {(s.file, s.line) for s in syncs if s.kind == "pageable-copy"}
    cap = ev.capture
    if cap is not None and not cap.ok and cap.file and cause_of(cap, ev.probe)[0] == "grad-scaler":
        # GradScaler's own read at `scaler.step(...)`: the grad-scaler finding explains that line
        syncs = [s for s in syncs if (s.file, s.line) != (cap.file, cap.line)]
    if cap is not None and cap.kind == "pageable-copy" and cap.file:
        pageable.add((cap.file, cap.line))
        if (cap.file, cap.line) not in {(s.file, s.line) for s in syncs}:
            syncs.append(ProbeEntry(file=cap.file, line=cap.line, code=cap.code, function=cap.function, snippet=cap.snippet, kind="pageable-copy"))
    for s in syncs:
        if (s.file, s.line) in pageable:
            s = dataclasses.replace(s, kind="pageable-copy")
        key = (s.file, s.line)
        if key in seen:
            continue
        seen.add(key)
        kind = s.kind or "hidden-sync"
        code = HazardCode.PAGEABLE_COPY if kind == "pageable-copy" else HazardCode.SYNC
        params: dict[str, Param] = {"what": s.what or s.op, "code": code_text(s)}
        out.append(hazard(kind, code, params, s, op=s.op, count=s.count))
    return out


def capture_failure(ev: Evidence) -> list[Hazard]:
    """The capture error itself, when no probe finding already explains it; its kind is read
    from what torch and CUDA said (launchprof.common.capture_causes), the causes a training
    step meets filed by launchprof.hazards.training."""
    cap = ev.capture
    if cap is None or cap.ok:
        return []
    kind, evidence = cause_of(cap, ev.probe)
    build = BUILDERS.get(kind)
    if build is not None:
        return [build(ev, cap, evidence)]
    probe = ev.probe or ProbeEvent()
    explained = {
        "hidden-sync": [s for s in probe.syncs if (s.kind if s.kind is not None else "hidden-sync") == "hidden-sync"],
        "pageable-copy": [s for s in probe.syncs if s.kind == "pageable-copy"],
        "unjoined-stream": [s for s in probe.streams if s.op in ("wait_stream", "wait_event")],
    }
    if kind in explained and explained[kind] and not cap.file:
        return []  # the probe's findings carry the lines; the capture error adds nothing
    site = cap if cap.file else target_site(ev.target)
    params: dict[str, Param] = {"exception": cap.exception, "message": cap.message, "cuda_errors": list(cap.cuda_errors)}
    return [hazard(kind, HazardCode.CAPTURE_FAILED, params, site, severity="error", cuda_errors=cap.cuda_errors)]
