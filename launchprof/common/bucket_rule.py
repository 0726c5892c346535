"""Capture buckets for a step whose batch size varies: which sizes, what padding costs.

The seeds' "bucketed LLM decode" recipe: capture one graph per size in a short list, pad
each call up to the next size, slice the result back, capture every graph into one shared
memory pool largest first, and run calls above the largest size eagerly. vLLM and SGLang
ship the same thing as a list of capture sizes.

Pure functions on recorded shapes, shared by the worker (which measures the plan) and the
analysis (which reports it): no torch here, so the logic is tested on CPU.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from launchprof.model.findings import Note, NoteCode, note

DEFAULT_MEMORY_BYTES = 2 * 2**30  # --bucket-memory
MAX_BUCKETS = 64  # more capture sizes than this is a user error, not a plan
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
          "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


@dataclass(frozen=True)
class BatchAxis:
    """The arguments that vary together along one dimension, and each call's size there."""

    arguments: list[tuple[str, int]]  # (argument path, dim), same size per call
    sizes: list[int]  # one per observed call, in call order
    others: list[tuple[str, int]] = field(default_factory=list)  # varying, but not with this axis


def default_sizes(largest: int) -> list[int]:
    """1, 2, 4, 8, then multiples of 8, up to the largest size seen, rounded up."""
    largest = max(1, int(largest))
    out = [s for s in (1, 2, 4, 8) if s < largest]
    top = 1 << (largest - 1).bit_length() if largest <= 8 else 8 * math.ceil(largest / 8)
    out += list(range(16, top, 8)) if largest > 8 else []
    return sorted(set(out) | {top})


# A capture size is a dimension that is padded up to it: past 16M rows the padded inputs
# alone would not fit on a GPU.
MAX_SIZE = 1 << 24


def parse_sizes(text: str) -> list[int]:
    """``--buckets 1,2,4,8``: positive integers, any order, duplicates dropped. ValueError
    says what is wrong in one line."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise ValueError(f"--buckets wants a comma-separated list of sizes like 1,2,4,8 (got {text!r})")
    sizes = []
    for p in parts:
        if not re.fullmatch(r"\d+", p) or int(p) < 1:
            raise ValueError(f"--buckets: {p!r} is not a positive whole number (e.g. --buckets 1,2,4,8)")
        if int(p) > MAX_SIZE:
            raise ValueError(f"--buckets: {p} is larger than any capture size can be (at most {MAX_SIZE:,})")
        sizes.append(int(p))
    if len(set(sizes)) > MAX_BUCKETS:
        raise ValueError(f"--buckets: {len(set(sizes))} sizes is more than {MAX_BUCKETS} graphs; choose fewer")
    return sorted(set(sizes))


def parse_bytes(text: str) -> int:
    """``--bucket-memory 2GiB`` (also 512MiB, 1.5G, 3000000000): bytes. ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise ValueError(f"--bucket-memory wants a size like 2GiB, 512MiB or 1.5G (got {text!r})")
    value = int(float(m.group(1)) * _UNITS[unit])
    if value <= 0:
        raise ValueError(f"--bucket-memory must be more than 0 bytes (got {text!r})")
    return value


def batch_axis(history: dict[str, list[tuple[int, ...]]]) -> BatchAxis | None:
    """The varying dimension of the call: arguments whose size along one dim changes
    between calls, grouped by identical per-call sizes; the largest group wins (a decode
    step's tokens, positions and lengths all vary with the batch)."""
    groups: dict[tuple[int, ...], list[tuple[str, int]]] = {}
    for path, shapes in sorted(history.items()):
        if len({len(s) for s in shapes}) != 1 or not shapes:
            continue
        for dim in range(len(shapes[0])):
            sizes = tuple(int(s[dim]) for s in shapes)
            if len(set(sizes)) > 1:
                groups.setdefault(sizes, []).append((path, dim))
    if not groups:
        return None
    best = max(groups, key=lambda k: (len(groups[k]), len(set(k)), max(k)))
    others = [a for k, v in groups.items() if k != best for a in v]
    return BatchAxis(arguments=groups[best], sizes=list(best), others=others)


def bucket_of(n: int, sizes: Sequence[int]) -> int | None:
    """The smallest capture size that holds ``n``; None: the call runs eagerly."""
    return next((s for s in sorted(sizes) if s >= n), None)


def padding_waste(seen: Sequence[int], sizes: Sequence[int]) -> float:
    """Padded rows over all rows the graphs compute, for the calls a graph serves: the
    fraction of the replayed work that is padding."""
    served = [(n, bucket_of(n, sizes)) for n in seen]
    total = sum(b for _, b in served if b is not None)
    padded = sum(b - n for n, b in served if b is not None)
    return round(padded / total, 4) if total else 0.0


def eager_calls(seen: Sequence[int], sizes: Sequence[int]) -> int:
    """Observed calls larger than the largest capture size: they run eagerly."""
    top = max(sizes, default=0)
    return sum(1 for n in seen if n > top)


def fit_memory(sizes: Sequence[int], pool_of: dict[int, int], limit: int) -> tuple[list[int], list[int]]:
    """(kept, dropped): drop the largest sizes while the shared pool would pass ``limit``.

    Captured largest first into one pool, the smaller graphs reuse the largest one's
    blocks, so the shared pool is about the largest kept graph's own pool (measured)."""
    kept = sorted(sizes)
    dropped: list[int] = []
    while len(kept) > 1 and pool_of.get(kept[-1], 0) > limit:
        dropped.insert(0, kept.pop())
    return kept, dropped


def explain(source: str, seen: Sequence[int], kept: Sequence[int], dropped: Sequence[int], limit: int) -> Note:
    """The choice, as a record (its sentence: launchprof.render.words.notes_text)."""
    return note(
        NoteCode.BUCKET_CHOICE, source=source, largest=max(seen, default=0), sizes=len(kept) + len(dropped), graphs=len(kept),
        padding_waste=padding_waste(seen, kept), dropped=list(dropped), limit_bytes=limit, eager_calls=eager_calls(seen, kept),
        eager_above=max(kept) if kept else None,
    )


def paste_snippet(arguments: Sequence[tuple[str, int]], sizes: Sequence[int], step: str = "step") -> str:
    """The plan as code: the capture-size list and a capture loop, largest first, one pool."""
    args = ", ".join(p for p, _ in arguments) or "x"
    dims = ", ".join(f"{p}: dim {d}" for p, d in arguments)
    return "\n".join([
        f"cudagraph_capture_sizes = {sorted(sizes)}",
        f"# pad {dims} up to the next size; calls above {max(sizes, default=0)} run eagerly",
        "pool = torch.cuda.graph_pool_handle()",
        "graphs, static_in, static_out = {}, {}, {}",
        "for size in sorted(cudagraph_capture_sizes, reverse=True):  # largest first: one shared pool",
        f"    static_in[size] = make_inputs(size)  # your {args}, padded to `size`",
        f"    {step}(*static_in[size])  # warm up (better: on a side stream)",
        "    graphs[size] = torch.cuda.CUDAGraph()",
        "    with torch.cuda.graph(graphs[size], pool=pool):",
        f"        static_out[size] = {step}(*static_in[size])",
    ])
