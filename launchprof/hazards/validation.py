"""replay-mismatch: replay's results differ from eager's for the same call and state."""

from __future__ import annotations

from launchprof.evidence import Evidence
from launchprof.hazards.common import hazard, target_site
from launchprof.session import Hazard


def replay_mismatch(ev: Evidence) -> list[Hazard]:
    bad = [v for v in ev.validations if not v.get("match")]
    if not bad:
        return []
    first = bad[0]
    worst = first.get("worst") or {}
    diff = worst.get("max_abs_diff")
    where = worst.get("path") or "output"
    size = f"max |diff| {diff:.3g}" if isinstance(diff, (int, float)) else worst.get("why", "values differ")
    msg = (
        f"replay differs from eager on {len(bad)} of {len(ev.validations)} compared calls; "
        f"first on call {first.get('index')}: {where}, {size}"
    )
    return [hazard("replay-mismatch", msg, target_site(ev.target), calls=[v.get("index") for v in bad])]
