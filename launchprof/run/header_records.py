"""The versioned header of a ``.lprun`` file: what was run, where, and how it ended.
"""

from __future__ import annotations

import dataclasses

from launchprof.model.core import Machine
from launchprof.model.records import model


RUN_FORMAT_VERSION = 1


@model
class WorkerOutcome:
    """How the worker process ended, as the CLI saw it."""

    returncode: int | None = None
    timed_out: bool = False
    interrupted: bool = False
    wall_s: float | None = None
    timeout: float | None = None


@model
class RunHeader:
    """The versioned header of a ``.lprun`` file: what was run, where, and how it ended.

    ``project_root`` is the absolute root on the machine that recorded the run; the loader
    maps absolute paths under it in the events to the relative names the sources are
    stored under, so a run re-renders the same on any machine."""

    format_version: int
    launchprof_version: str
    created: str
    script: str  # relative to the project root when inside it
    target: str | None = None
    argv: list[str] = dataclasses.field(default_factory=list)
    project_root: str | None = None
    machine: Machine | None = None
    worker: WorkerOutcome = dataclasses.field(default_factory=WorkerOutcome)
    repeat: int = 50
    sources: list[str] = dataclasses.field(default_factory=list)  # relative names under sources/
    traces: dict[str, str] = dataclasses.field(default_factory=dict)  # what -> member name
