"""Where ``analyze`` saves its run file, and how many it keeps.

Next to the first ``-o`` file (same stem, ``.lprun``; ``-o -`` is not a file) so a report and its run travel
together; with no ``-o``, under ``.launchprof/runs/`` in the current folder, keeping the
last :data:`KEEP` runs so the folder does not grow without bound; ``--run-out`` wins.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from launchprof.fileio.output_files import is_stdout

SUFFIX = ".lprun"
KEEP = 10
RUNS_DIR = Path(".launchprof") / "runs"


def files_of(outputs: list[Path]) -> list[Path]:
    """The ``-o`` paths that are files: ``-`` is standard output, with no folder to share."""
    return [p for p in outputs if not is_stdout(p)]


def in_kept_runs(outputs: list[Path], run_out: Path | None) -> bool:
    """Whether the run file goes to the kept runs (and the oldest beyond :data:`KEEP` go)."""
    return run_out is None and not files_of(outputs)


def default_run_path(script: Path, outputs: list[Path], run_out: Path | None, cwd: Path | None = None) -> Path:
    if run_out is not None:
        return run_out
    files = files_of(outputs)
    if files:
        return files[0].with_suffix(SUFFIX)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    return (cwd or Path.cwd()) / RUNS_DIR / f"{script.stem}-{stamp}{SUFFIX}"


def prune(folder: Path, keep: int = KEEP) -> list[Path]:
    """Delete all but the newest ``keep`` run files in ``folder``; returns what went."""
    runs = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: (p.stat().st_mtime, p.name))
    gone = runs[: max(len(runs) - keep, 0)]
    for p in gone:
        p.unlink(missing_ok=True)
    return gone
