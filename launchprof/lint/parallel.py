"""``--all`` over many files: chunks of files checked in worker processes, results in order.

Under ``--all`` nothing is followed across files, so each file is checked on its own
and the work splits cleanly. Parsing is most of the cost and holds the GIL, so
processes (forked: no re-import, no pickled trees) are what use a second core. Small
runs stay in one process, where starting workers would cost more than they save.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from launchprof.lint.collector import Found

# Fewer files than this are checked in this process.
PARALLEL_MIN_FILES = 64
# At most this many files per task, and about this many tasks per worker: few enough to
# amortise the round trips, enough to balance the cores.
CHUNK_FILES = 16
CHUNKS_PER_WORKER = 8


@dataclass(frozen=True)
class ChunkResult:
    """What checking one chunk of files gave (everything picklable, no syntax trees)."""

    hazards: list[Found]
    suppressed: int
    skipped: list[str]
    targets: list
    lines: int
    read: int
    unreadable: list[str]
    ignores: list[tuple[str, int, str]]


def workers_for(files: int) -> int:
    """How many worker processes to use for ``files`` files: 0 means check them here."""
    if files < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return 0
    cores = usable_cores()
    return min(cores, files // CHUNK_FILES) if cores > 1 else 0


def usable_cores() -> int:
    """Cores this process may run on (a CI container often gets fewer than the host has)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def check_in_workers(
    check_chunk: Callable[[list[str], Path, bool], ChunkResult],
    files: list[str],
    root: Path,
    strict: bool,
    workers: int,
    meanwhile: Callable[[], object] | None = None,
) -> list[ChunkResult]:
    """Check ``files`` in ``workers`` forked processes; the results come back in file order.

    ``check_chunk`` is a worker's task, ``(files, root, strict) -> ChunkResult``: the engine's,
    passed in so that this module stays below it (a module-level function: the pool sends
    it to the workers by name).

    ``meanwhile`` runs in this process while the workers check: the command imports what
    it needs to render the report then, on the core the workers leave it.
    """
    import multiprocessing  # only here: a small run does not pay for importing it

    chunks = split(files, workers)
    order = sorted(range(len(chunks)), key=lambda i: -chunks[i][1])  # the biggest first: no straggler at the end
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        pending = pool.starmap_async(check_chunk, [(chunks[i][0], root, strict) for i in order], chunksize=1)
        if meanwhile is not None:
            meanwhile()
        results = pending.get()
    in_file_order: list[ChunkResult] = [None] * len(chunks)  # type: ignore[list-item]
    for i, result in zip(order, results):
        in_file_order[i] = result
    return in_file_order


def split(files: list[str], workers: int) -> list[tuple[list[str], int]]:
    """Consecutive runs of files of about equal size in bytes, ``(files, bytes)`` each.

    Equal file counts made uneven work (torch/nn: 7 KB to 640 KB per 16 files); about
    :data:`CHUNKS_PER_WORKER` chunks per worker, each of at most :data:`CHUNK_FILES`
    files, keep the cores busy to the end.
    """
    sizes = [_size(f) for f in files]
    budget = max(1, sum(sizes) // (workers * CHUNKS_PER_WORKER))
    chunks: list[tuple[list[str], int]] = []
    current: list[str] = []
    total = 0
    for path, size in zip(files, sizes):
        if current and (total + size > budget or len(current) >= CHUNK_FILES):
            chunks.append((current, total))
            current, total = [], 0
        current.append(path)
        total += size
    if current:
        chunks.append((current, total))
    return chunks


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # unreadable: noted when the worker reads it
        return 0
