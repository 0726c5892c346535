"""The capture failure launchprof answered by releasing a kept autograd graph stays a finding.

When the caller keeps an earlier call's output with its autograd graph, capture fails;
launchprof detaches those outputs for the measurement and captures again
(worker/capture_retry.py). The ``capture`` event the rules read is then the retry's (a
graph, or the next obstacle), so the first failure would vanish from the report: this rule
files it from the ``kept-graph`` event, worded as the capture-failure rule words it. The
user's code still keeps the graph; only the measurement did not.
"""

from __future__ import annotations

import dataclasses

from launchprof.hazards.syncs import capture_failure
from launchprof.model.hazard_records import Hazard
from launchprof.run.evidence import Evidence


def released_graph(ev: Evidence) -> list[Hazard]:
    kept = ev.kept_graph
    if kept is None or kept.failure.ok:
        return []
    return capture_failure(dataclasses.replace(ev, capture=kept.failure))
