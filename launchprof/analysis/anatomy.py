"""The captured graph's anatomy: levels, width, critical path, joined with replay times.

A graph is a dependency structure, not a sequence (seeds: "What replay changes about the
schedule"): nodes with no path between them may run at once. The worker writes the raw
nodes and edges (``anatomy`` event); everything here is plain Python over them, so it is
tested on CPU. Node times come from the profiled replay: graph nodes are joined to the
trace's GPU activities of the same kind, by kernel name where the driver gave one, else
by order (the order capture added the nodes).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from launchprof.events.capture_events import AnatomyEvent, GraphNodeRow
from launchprof.model.step_timing import Anatomy, GraphNode
from launchprof.common.graph_levels import levels_of

if TYPE_CHECKING:  # pandas loads with the first trace read (a run without traces never needs it)
    import pandas as pd

DRAW_LIMIT = 60  # graphs up to this many nodes keep their nodes and edges for drawing
_TRACE_KIND = {"kernel": "kernel", "memcpy": "memcpy", "memset": "memset"}


def critical_path(count: int, edges: list[list[int]], weight: list[float]) -> list[int]:
    """The heaviest chain of nodes from a root to a leaf (node ids, in order)."""
    if count == 0:
        return []
    level = levels_of(count, edges)
    preds: dict[int, list[int]] = defaultdict(list)
    for a, b in edges:
        preds[b].append(a)
    best = [0.0] * count
    back: list[int | None] = [None] * count
    for i in sorted(range(count), key=lambda n: level[n]):
        best[i] = weight[i]
        for p in preds[i]:
            if best[p] + weight[i] > best[i]:
                best[i], back[i] = best[p] + weight[i], p
    end = max(range(count), key=lambda n: best[n])
    path = [end]
    while back[path[-1]] is not None:
        path.append(back[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def _tokens(name: str) -> list[str]:
    """Identifiers of a demangled kernel name's function part, longest first."""
    head = name.split("(")[0]
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{5,}", re.sub(r"<.*>", "", head))
    return sorted(set(words) - {"native", "cutlass", "device", "kernel", "void"}, key=len, reverse=True)


def node_times(nodes: list[GraphNodeRow], gpu: pd.DataFrame | None) -> list[float | None]:
    """Each node's duration in the profiled replay, joined by kind, then name, then order."""
    out: list[float | None] = [None] * len(nodes)
    if gpu is None or gpu.empty:
        return out
    call = gpu[gpu["call"] == 0] if "call" in gpu and (gpu["call"] == 0).any() else gpu
    for kind in _TRACE_KIND:
        rows = call[call["kind"] == _TRACE_KIND[kind]]
        pool = list(zip(rows["name"].astype(str), rows["dur_us"].astype(float), strict=True))
        used = [False] * len(pool)
        for node in (n for n in nodes if n.type == kind):
            pick = _match(node.name, pool, used)
            if pick is not None:
                used[pick] = True
                out[node.id] = pool[pick][1]
    return out


def _match(mangled: str | None, pool: list[tuple[str, float]], used: list[bool]) -> int | None:
    free = [i for i, u in enumerate(used) if not u]
    if not free:
        return None
    if mangled:
        for i in free:
            tokens = _tokens(pool[i][0])
            if tokens and tokens[0] in mangled:
                return i
    return free[0]


def overlap_us(gpu: pd.DataFrame | None) -> tuple[int | None, float | None]:
    """(streams, GPU time that ran alongside other GPU work) in the profiled replay:
    the sum of durations minus the length of their union."""
    if gpu is None or gpu.empty:
        return None, None
    rows = gpu.sort_values("start_us")
    union, end = 0.0, float("-inf")
    for start, stop in zip(rows["start_us"].astype(float), rows["end_us"].astype(float), strict=True):
        if start >= end:
            union += stop - start
            end = stop
        elif stop > end:
            union += stop - end
            end = stop
    return int(rows["stream"].nunique()), max(float(rows["dur_us"].sum()) - union, 0.0)


def anatomy_of(event: AnatomyEvent | None, replay_gpu: pd.DataFrame | None) -> Anatomy | None:
    """The report's ``replay.anatomy`` from the worker's ``anatomy`` event."""
    if event is None or not event.nodes:
        return None
    nodes = sorted(event.nodes, key=lambda n: n.id)
    count = len(nodes)
    raw_edges = event.edges
    edges = [[int(a), int(b)] for a, b in raw_edges or []]
    times = node_times(nodes, replay_gpu)
    known = [t for t in times if t is not None]
    level = levels_of(count, edges)
    per_level = [0] * (max(level) + 1 if level else 0)
    for lv in level:
        per_level[lv] += 1
    path = critical_path(count, edges, [t if t is not None else (0.0 if known else 1.0) for t in times])
    by_type: dict[str, int] = defaultdict(int)
    for n in nodes:
        by_type[n.type] += 1
    streams, overlap = overlap_us(replay_gpu)
    has_edges = raw_edges is not None
    small = count <= DRAW_LIMIT and has_edges
    return Anatomy(
        nodes_by_type=dict(by_type),
        edges=len(edges) if has_edges else None,
        roots=count - len({b for _, b in edges}) if has_edges else None,
        leaves=count - len({a for a, _ in edges}) if has_edges else None,
        critical_path_nodes=len(path) if has_edges else None,
        critical_path_us=sum(times[i] or 0.0 for i in path) if has_edges and known else None,
        max_width=max(per_level) if has_edges and per_level else None,
        total_us=sum(known) if known else None,
        levels=per_level if has_edges else [],
        critical_path=path if has_edges else [],
        nodes=[GraphNode(id=n.id, type=n.type, name=n.name, level=level[i], us=times[i]) for i, n in enumerate(nodes)] if small else [],
        edge_list=edges if small else [],
        replay_streams=streams,
        overlap_us=overlap,
    )


def with_anatomy(replay: Any, event: AnatomyEvent | None, replay_trace: dict[str, Any] | None) -> Any:
    """``replay`` (a ReplayProfile or None) with its anatomy, where the worker wrote one."""
    if replay is None or event is None:
        return replay
    import dataclasses

    gpu = None
    if replay_trace:
        from launchprof.common.trace_tables import gpu_table  # pandas: only where a trace is read

        gpu = graph_rows(replay_trace, gpu_table(replay_trace))
    return dataclasses.replace(replay, anatomy=anatomy_of(event, gpu))


def graph_rows(trace: dict[str, Any], gpu: pd.DataFrame) -> pd.DataFrame:
    """The GPU activities the graph launch ran (they share its correlation id), without
    the copies of new inputs into the static buffers that precede it."""
    launches = {
        (e.get("args") or {}).get("correlation")
        for e in trace.get("traceEvents", [])
        if str(e.get("name", "")).startswith("cudaGraphLaunch")
    }
    launches.discard(None)
    return gpu[gpu["correlation"].isin(launches)] if launches else gpu
