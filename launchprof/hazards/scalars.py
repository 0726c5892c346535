"""frozen-scalar: a Python number argument that changes between calls.

The graph bakes the captured value into its kernel arguments. A warning from the
observation alone; an error when validation shows replay giving a different result
for a call whose value differed.
"""

from __future__ import annotations

from typing import Any

from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import first_use, hazard, target_site
from launchprof.model.hazard_records import Hazard


def scalar_history(ev: Evidence) -> dict[str, list[Any]]:
    """Values seen per scalar argument path, in call order."""
    seen: dict[str, list[Any]] = {}
    for call in ev.calls:
        for leaf in call.args:
            if leaf.kind == "scalar":
                seen.setdefault(str(leaf.path), []).append(leaf.value)
    return seen


# Distinct values a frozen-scalar hazard names.
SHOWN_VALUES = 4


def _distinct(values: list[Any]) -> list[Any]:
    distinct: list[Any] = []
    for v in values:
        if v not in distinct:
            distinct.append(v)
    return distinct


def frozen_scalars(ev: Evidence) -> list[Hazard]:
    out = []
    for path, values in scalar_history(ev).items():
        if len(set(map(repr, values))) < 2:
            continue
        failed = [v for v in ev.validations if path in v.changed_scalars and not v.match]
        checked = [v for v in ev.validations if path in v.changed_scalars]
        captured = next((v.captured_scalars.get(path) for v in checked), None)
        distinct = _distinct(values)
        params: dict[str, Param] = {
            "argument": path,
            "values": distinct[:SHOWN_VALUES],
            "distinct": len(distinct),
            "outcome": "differed" if failed else "matched" if checked else "unchecked",
            "captured": captured,
            "max_abs_diff": failed[0].max_abs_diff if failed else None,
        }
        site = first_use(ev.target, path) or target_site(ev.target)
        severity = "error" if failed else "warning"
        out.append(hazard("frozen-scalar", HazardCode.FROZEN_SCALAR, params, site, severity=severity, argument=path, values=values[:20]))
    return out
