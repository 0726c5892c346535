"""dynamic-shape: argument shapes that vary between calls (one graph per shape)."""

from __future__ import annotations

from launchprof.run.evidence import Evidence
from launchprof.events.record import Scalar
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.render.words.hazard_runtime_text import SHOWN_SHAPES
from launchprof.hazards.common import hazard, target_site
from launchprof.model.hazard_records import Hazard


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
    counts: list[Scalar] = []
    dims: list[Scalar] = []
    ndims: list[Scalar] = []
    for _, shapes in sorted(varying.items()):
        distinct = sorted(set(shapes))
        counts.append(len(distinct))
        for shape in distinct[:SHOWN_SHAPES]:
            dims.extend(shape)
            ndims.append(len(shape))
    params: dict[str, Param] = {
        "arguments": sorted(varying),
        "shape_counts": counts,  # distinct shapes of each argument
        "shape_dims": dims,  # the shapes named, argument by argument, their dims in a row
        "shape_ndims": ndims,  # how many of shape_dims each named shape takes
        "fallbacks": sum(1 for f in ev.fallbacks if f.reason == "shape"),
    }
    return [hazard("dynamic-shape", HazardCode.DYNAMIC_SHAPE, params, ev.call_site or target_site(ev.target), arguments=sorted(varying))]
