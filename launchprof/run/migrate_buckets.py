"""Report version 2 -> 3: the ``buckets`` list becomes one bucket plan.

Version 2 wrote one entry per varying argument (``argument, dim, sizes, padding_waste,
pool_bytes_estimate``). Its pool figure was an estimate scaled from the first graph's
pool, which holds the one-time cuBLAS workspace (about 4x too high), so it is
kept only as a note, never as a measured ``shared_pool_bytes``.
"""

from __future__ import annotations

from typing import Any


def plan_from_list(old: Any) -> dict[str, Any] | None:
    """The version 3 plan from a version 2 list (None or empty: None; a dict: unchanged)."""
    if isinstance(old, dict) or old is None:
        return old
    entries = [e for e in old if isinstance(e, dict)] if isinstance(old, list) else []
    if not entries:
        return None
    first = entries[0]
    sizes = sorted({int(s) for s in first.get("sizes") or []})
    same = [e for e in entries if sorted({int(s) for s in e.get("sizes") or []}) == sizes]
    others = [e for e in entries if e not in same]
    notes = ["from a version 2 report: the plan was not measured"]
    estimate = first.get("pool_bytes_estimate")
    if isinstance(estimate, (int, float)):
        notes.append(f"version 2 estimated the shared pool at {int(estimate)} bytes (an overestimate: it counted the one-time cuBLAS workspace)")
    return {
        "arguments": [{"argument": str(e.get("argument")), "dim": int(e.get("dim", 0))} for e in same],
        "recommended": sizes,
        "measured": [],
        "shared_pool_bytes": None,
        "private_pool_bytes": None,
        "workspace_bytes": None,
        "padding_waste": float(first.get("padding_waste") or 0.0),
        "padding_safe": None,
        "speedup": None,
        "explanation": f"capture sizes {', '.join(map(str, sizes))} (version 2 report, powers of two)",
        "source": "default",
        "others": [{"argument": str(e.get("argument")), "dim": int(e.get("dim", 0))} for e in others],
        "notes": notes,
    }
