"""frozen-scalar: a Python number argument that changes between calls.

The graph bakes the captured value into its kernel arguments. A warning from the
observation alone; an error when validation shows replay giving a different result
for a call whose value differed.
"""

from __future__ import annotations

from typing import Any

from launchprof.evidence import Evidence
from launchprof.hazards.common import first_use, hazard, target_site
from launchprof.models import Hazard


def scalar_history(ev: Evidence) -> dict[str, list[Any]]:
    """Values seen per scalar argument path, in call order."""
    seen: dict[str, list[Any]] = {}
    for call in ev.calls:
        for leaf in call.args:
            if leaf.kind == "scalar":
                seen.setdefault(str(leaf.path), []).append(leaf.value)
    return seen


def _fmt(values: list[Any]) -> str:
    distinct: list[Any] = []
    for v in values:
        if v not in distinct:
            distinct.append(v)
    shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in distinct[:4])
    more = f", … ({len(distinct)} distinct values)" if len(distinct) > 4 else ""
    return shown + more


def frozen_scalars(ev: Evidence) -> list[Hazard]:
    out = []
    for path, values in scalar_history(ev).items():
        if len(set(map(repr, values))) < 2:
            continue
        failed = [v for v in ev.validations if path in v.changed_scalars and not v.match]
        checked = [v for v in ev.validations if path in v.changed_scalars]
        captured = next((v.captured_scalars.get(path) for v in checked), None)
        msg = f"`{path}` is a Python number that changes between calls (seen {_fmt(values)})"
        if failed:
            diff = failed[0].max_abs_diff
            msg += (
                f"; the graph keeps the captured value {captured!r}: replay differed from eager "
                f"(max |diff| {diff:.3g})" if isinstance(diff, (int, float)) else "; replay differed from eager"
            )
            severity = "error"
        elif checked:
            msg += "; replay with a different value matched eager, so it may not reach a kernel, but the graph still keeps the captured value"
            severity = "warning"
        else:
            msg += "; the graph would keep the captured value"
            severity = "warning"
        site = first_use(ev.target, path) or target_site(ev.target)
        out.append(hazard("frozen-scalar", msg, site, severity=severity, argument=path, values=values[:20]))
    return out
