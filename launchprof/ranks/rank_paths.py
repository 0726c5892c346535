"""Per-rank file names: a rank's file is the single-GPU name with ``.rankN`` before the suffix.

``events.jsonl`` -> ``events.rank1.jsonl``; ``out/report.lprun`` -> ``out/report.rank1.lprun``;
``out/report.json`` -> ``out/report.rank1.json``. The combined report keeps the plain name, so
every rank's files lie next to it and sort together.
"""

from __future__ import annotations

from pathlib import Path


def rank_path(path: str | Path, rank: int) -> Path:
    """``path`` for one rank: ``NAME.rankN.SUFFIX`` next to ``NAME.SUFFIX``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.rank{rank}{p.suffix}")


def rank_folder_file(path: str | Path, rank: int) -> Path:
    """A worker's own file for one rank: ``DIR/rankN/NAME``. Each rank writes into a folder of
    its own, since the worker names its profiler traces after its folder (``trace-eager.json.gz``)."""
    p = Path(path)
    return p.parent / f"rank{rank}" / p.name
