"""replay-mismatch: replay's results differ from eager's for the same call and state."""

from __future__ import annotations

from launchprof.events.capture_events import ValidationLeaf
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import hazard, target_site
from launchprof.model.hazard_records import Hazard


def replay_mismatch(ev: Evidence) -> list[Hazard]:
    bad = [v for v in ev.validations if not v.match]
    if not bad:
        return []
    first = bad[0]
    worst = first.worst or ValidationLeaf()
    where = worst.path or "output"
    # The same figure as the report's validation row: the largest difference over every
    # compared call, not the first mismatching call's.
    diffs = [v.max_abs_diff for v in ev.validations if v.max_abs_diff is not None]
    params: dict[str, Param] = {
        "differing": len(bad),
        "compared": len(ev.validations),
        "max_abs_diff": max(diffs) if diffs else None,
        "why": worst.why,
        "first_call": first.index,
        "output": where,
    }
    return [hazard("replay-mismatch", HazardCode.REPLAY_MISMATCH, params, target_site(ev.target), calls=[v.index for v in bad])]
