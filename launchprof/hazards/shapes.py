"""dynamic-shape: argument shapes that vary between calls (one graph per shape)."""

from __future__ import annotations

from launchprof.evidence import Evidence
from launchprof.hazards.common import hazard, target_site
from launchprof.models import Hazard


def shape_history(ev: Evidence) -> dict[str, list[tuple[int, ...]]]:
    seen: dict[str, list[tuple[int, ...]]] = {}
    for call in ev.calls:
        for leaf in call.args:
            if leaf.kind == "tensor":
                seen.setdefault(str(leaf.path), []).append(tuple(leaf.shape or ()))
    return seen


def varying_shapes(ev: Evidence) -> dict[str, list[tuple[int, ...]]]:
    return {p: s for p, s in shape_history(ev).items() if len(set(s)) > 1}


def dynamic_shapes(ev: Evidence) -> list[Hazard]:
    varying = varying_shapes(ev)
    if not varying:
        return []
    parts = []
    for path, shapes in sorted(varying.items()):
        distinct = sorted(set(shapes))
        shown = ", ".join("x".join(map(str, s)) for s in distinct[:6]) + (f", … ({len(distinct)} shapes)" if len(distinct) > 6 else "")
        parts.append(f"`{path}`: {shown}")
    fallbacks = sum(1 for f in ev.fallbacks if f.reason == "shape")
    tail = f"; {fallbacks} calls did not match the captured shape and ran eagerly" if fallbacks else ""
    msg = "argument shapes vary between calls (" + "; ".join(parts) + ")" + tail
    return [hazard("dynamic-shape", msg, ev.call_site or target_site(ev.target), arguments=sorted(varying))]
