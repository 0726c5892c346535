"""reallocated-input: tensors the target reads that are new allocations each call.

As an argument, launchprof (and the user's graphed code) copies it into the static
buffer: info, with what the copy costs. Read as a global or attribute the script
rebinds, the graph silently keeps reading the old memory: error.
"""

from __future__ import annotations

from launchprof.evidence import Evidence
from launchprof.hazards.common import first_use, hazard, target_site
from launchprof.session import Hazard


def reallocated_arguments(ev: Evidence) -> dict[str, int]:
    """Argument paths that are a new tensor each call, with their size in bytes.

    The one definition is the worker's: it holds a weak reference to each argument's first
    tensor and calls an argument moved when a later call passes another tensor or another
    address (a fresh tensor can land at the same address). It reports that set as the
    ``capture`` event's ``moved_args``, the inputs it copies into the static buffers. The
    analysis does not second-guess it from the recorded pointers. Runs recorded before the
    worker reported it have no moved arguments."""
    moved = (ev.capture or {}).get("moved_args") or []
    sizes: dict[str, int] = {}
    for call in ev.calls:
        for leaf in call.get("args", []):
            if leaf.get("kind") == "tensor":
                sizes[leaf["path"]] = int(leaf.get("bytes") or 0)
    return {str(p): sizes.get(str(p), 0) for p in moved}


def reallocated_inputs(ev: Evidence) -> list[Hazard]:
    out = []
    moved = reallocated_arguments(ev)
    if moved:
        total = sum(moved.values())
        copy_us = (ev.probe or {}).get("copy_us")
        cost = f"; copying them in costs about {copy_us:.1f} µs per call" if isinstance(copy_us, (int, float)) else ""
        names = ", ".join(f"`{p}`" for p in sorted(moved))
        msg = f"{names} {'is a new allocation' if len(moved) == 1 else 'are new allocations'} each call ({total:,} bytes); launchprof copies {'it' if len(moved) == 1 else 'them'} into the static input buffers{cost}"
        out.append(hazard("reallocated-input", msg, ev.call_site or target_site(ev.target), severity="info", arguments=sorted(moved)))
    names = sorted({n for r in ev.state_reallocs for n in r.get("names", [])})
    failed = any(not v.get("match") for v in ev.validations)
    for name in names:
        msg = f"`{name}` is rebound to a new tensor between calls: a graph keeps reading the memory captured the first time"
        if failed:
            msg += "; validation confirms replay differs from eager"
        site = first_use(ev.target, name) or target_site(ev.target)
        out.append(hazard("reallocated-input", msg, site, severity="error", variable=name))
    return out
