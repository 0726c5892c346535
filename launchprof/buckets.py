"""Capture buckets for arguments whose shape varies: sizes, padding waste, pool memory.

The seeds' recipe: capture one graph per bucket (e.g. powers of two), pad each call up
to the next bucket, share one memory pool capturing the largest bucket first, so pool
memory is about that of the largest graph.
"""

from __future__ import annotations

from launchprof.session import Bucket


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def recommend(
    shapes: dict[str, list[tuple[int, ...]]],
    captured: dict[str, tuple[int, ...]] | None = None,
    pool_bytes: int | None = None,
) -> list[Bucket]:
    out = []
    for path, seen in sorted(shapes.items()):
        ranks = {len(s) for s in seen}
        if len(ranks) != 1:
            continue
        rank = ranks.pop()
        for dim in range(rank):
            sizes = [s[dim] for s in seen]
            if len(set(sizes)) < 2:
                continue
            buckets = sorted({_next_pow2(n) for n in sizes})
            waste = sum((_next_pow2(n) - n) / _next_pow2(n) for n in sizes) / len(sizes)
            estimate = None
            if pool_bytes and captured and path in captured and captured[path][dim] > 0:
                # Shared pool, largest first: about the largest bucket's share of the captured graph's pool.
                estimate = int(pool_bytes * max(buckets) / captured[path][dim])
            out.append(Bucket(argument=path, dim=dim, sizes=buckets, padding_waste=round(waste, 4), pool_bytes_estimate=estimate))
    return out
