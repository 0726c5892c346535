"""replay-mismatch: replay's results differ from eager's for the same call and state."""

from __future__ import annotations

from launchprof.events.capture import ValidationLeaf
from launchprof.evidence import Evidence
from launchprof.hazards.common import hazard, target_site
from launchprof.models import Hazard


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
    size = f"max |diff| {max(diffs):.3g}" if diffs else (worst.why if worst.why is not None else "values differ")
    msg = (
        f"replay differs from eager on {len(bad)} of {len(ev.validations)} compared calls "
        f"({size}); the first is call {first.index}, in {where}"
    )
    return [hazard("replay-mismatch", msg, target_site(ev.target), calls=[v.index for v in bad])]
