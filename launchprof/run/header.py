"""The run file's header, built in one place for ``analyze`` and the in-process API.

Both write the same ``.lprun`` format, so the versions, the creation time, the script's
name relative to the project root and the machine are filled in the same way for both.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from launchprof.run.header_records import RUN_FORMAT_VERSION, RunHeader, WorkerOutcome
from launchprof.model.core import Machine
from launchprof.common.project import relative_to_root
from launchprof.version import __version__


def run_header(
    script: str | Path,
    target: str | None,
    root: Path,
    worker: WorkerOutcome,
    repeat: int,
    *,
    argv: Sequence[str] = (),
    machine: Machine | None = None,
) -> RunHeader:
    """The header of a run; ``machine`` is what the caller knows of it (analyze and the API
    pass the one the worker's ``machine`` event gave), None when nothing is known."""
    return RunHeader(
        format_version=RUN_FORMAT_VERSION,
        launchprof_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        script=relative_to_root(script, root),
        target=target,
        argv=list(argv),
        project_root=str(root),
        machine=machine,
        worker=worker,
        repeat=repeat,
    )
