"""The fixes the report will show, written in the worker from its own event log.

The one function of the analysis the worker imports (tests/test_layout.py allows this edge
alone): the worker tries each fix before the report shows it (worker/fix_trials.py), and only
the report's own rules, run on the same events, write the very fix the report shows.
"""

from __future__ import annotations

from typing import Any

from launchprof.hazards.rules import find_hazards
from launchprof.model.hazard_records import Fix
from launchprof.run.evidence import parse_events


def fixes_to_try(events: list[dict[str, Any]]) -> list[tuple[str, Fix]]:
    """(hazard kind, written fix) for every hazard of these events whose fix has an ``after``."""
    return [(h.kind, h.fix) for h in find_hazards(parse_events(events)) if h.fix is not None and h.fix.after]
