"""A captured graph's levels: how deep each node sits below the roots."""

from __future__ import annotations

from collections import defaultdict


def levels_of(count: int, edges: list[list[int]]) -> list[int]:
    """Each node's level: 0 for roots, else one more than its deepest predecessor.
    Kahn's order, so a cycle (never in a CUDA graph) leaves its nodes at level 0."""
    preds: dict[int, list[int]] = defaultdict(list)
    succs: dict[int, list[int]] = defaultdict(list)
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
    indeg = {i: len(preds[i]) for i in range(count)}
    order = [i for i in range(count) if indeg[i] == 0]
    level = [0] * count
    for i in order:  # the list grows as nodes become free
        for j in succs[i]:
            level[j] = max(level[j], level[i] + 1)
            indeg[j] -= 1
            if indeg[j] == 0:
                order.append(j)
    return level
