"""Synthetic ``bucket-*`` events, shaped as launchprof/worker/bucket_measure.py writes them
(docs/worker-events.md), for the CPU tests of the analysis and the renderers."""

from __future__ import annotations

from typing import Any

from launchprof.analysis.bucket_advice import bucket_plan
from launchprof.run.evidence import parse_events
from launchprof.model.bucket_plan import BucketPlan

MiB = 2**20


def calls(sizes: list[int], path: str = "tokens", dim: int = 0) -> list[dict[str, Any]]:
    """One ``call`` event per size: ``path`` varies along ``dim``; a fixed weight does not."""
    out = []
    for i, n in enumerate(sizes):
        shape = [n, 64] if dim == 0 else [64, n]
        out.append({"type": "call", "index": i, "phase": "eager", "args": [
            {"path": path, "kind": "tensor", "shape": shape, "dtype": "int64", "device": "cuda:0"},
            {"path": "w", "kind": "tensor", "shape": [64, 64], "dtype": "float32", "device": "cuda:0"},
        ]})
    return out


def measured_events(sizes: list[int], plan: list[int], leak: bool = False, limit: int = 2**30) -> list[dict[str, Any]]:
    """A measured plan: private pools growing with the size, a shared pool that holds about
    the largest graph, a padding check per size (one failing with a leak when ``leak``)."""
    ev: list[dict[str, Any]] = [{"type": "target", "name": "step"}, *calls(sizes)]
    ev.append({"type": "bucket-plan", "arguments": [{"argument": "tokens", "dim": 0}], "sizes": plan, "source": "user", "limit_bytes": limit})
    for s in sorted(plan, reverse=True):
        ev.append({"type": "bucket-measure", "stage": "private", "size": s, "pool_bytes": s * MiB, "capture_ms": 1.5})
    kept = [s for s in plan if s * MiB <= limit] or plan[:1]
    for i, s in enumerate(sorted(kept, reverse=True)):
        ev.append({"type": "bucket-measure", "stage": "shared", "size": s, "capture_ms": 2.0 + s / 10,
                   "replay_us": 40.0 + s, "added_bytes": s * MiB if i == 0 else 0})
    for s in kept:
        ok = not (leak and s == max(kept))
        ev.append({"type": "bucket-check", "size": s, "calls_size": max(1, s - 1), "match": ok, "max_abs_diff": 0.0 if ok else 0.25, "worst": None if ok else "output"})
    if leak:
        ev.append({"type": "bucket-leak", "size": max(kept), "calls_size": max(kept) - 1, "output": "output", "max_abs_diff": 0.25,
                   "file": "/proj/model.py", "line": 21, "code": "pooled = h.mean(dim=0)", "op": "mean"})
    dropped = [s for s in plan if s not in kept]
    ev.append({"type": "bucket-end", "kept": kept, "dropped": dropped, "shared_pool_bytes": max(kept) * MiB,
               "private_pool_bytes": sum(kept) * MiB, "workspace_bytes": 32 * MiB,
               "eager_us": [1000.0 + i for i in range(10)], "plan_us": [400.0 + i for i in range(10)]})
    return ev


def measured_plan(leak: bool = False) -> BucketPlan:
    plan = bucket_plan(parse_events(measured_events([3, 8, 5, 13, 8, 1, 16, 8, 2, 8], [1, 2, 4, 8, 16], leak=leak)))
    assert plan is not None
    return plan
