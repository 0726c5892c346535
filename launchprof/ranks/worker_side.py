"""What a rank's worker does differently from a single-GPU worker.

The launcher (``torch.distributed.run``) starts the same worker command on every rank and
tells each one its rank through ``RANK`` / ``LOCAL_RANK`` / ``WORLD_SIZE``. Each rank then
writes its own events and traces in a folder of its own (:func:`launchprof.ranks.rank_paths.rank_folder_file`), and first of
all a ``rank`` event with its process id, so the CLI can stop every rank's process group
(the launcher starts each rank in a session of its own) and tell which rank died.
"""

from __future__ import annotations

import dataclasses
import os

from launchprof.ranks.rank_paths import rank_folder_file
from launchprof.worker.config import WorkerConfig
from launchprof.events.lifecycle_events import RankEvent
from launchprof.worker.event_writer import EventWriter


def rank_of_env() -> int | None:
    """This process's global rank as the launcher set it, or None outside a launcher."""
    value = os.environ.get("RANK")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def for_rank(config: WorkerConfig) -> WorkerConfig:
    """The config with this rank's own file names; unchanged for a single-GPU run (``ranks`` 0),
    even when the CLI itself runs under someone else's launcher."""
    rank = rank_of_env()
    if not config.ranks or rank is None:
        return config
    events = rank_folder_file(config.events_path, rank)
    events.parent.mkdir(parents=True, exist_ok=True)
    # One rank measures the quick device profile (the others would measure the same GPU model
    # at the same time, on a shared host); the CLI finds it cached for every rank's report.
    return dataclasses.replace(
        config, events_path=str(events), trace_path=str(rank_folder_file(config.trace_path, rank)), calibrate=config.calibrate and rank == 0
    )


def use_rank_device(config: WorkerConfig) -> None:
    """Put this rank on its own GPU (``LOCAL_RANK``) before the worker touches CUDA again: the
    machine event, the device profile and any allocation before the script's own
    ``torch.cuda.set_device`` would otherwise all land on GPU 0."""
    local = _int(os.environ.get("LOCAL_RANK"))
    if not config.ranks or local is None:
        return
    import torch

    if local < torch.cuda.device_count():
        torch.cuda.set_device(local)


def announce_rank(config: WorkerConfig, events: EventWriter) -> None:
    """The ``rank`` event, before anything that may fail (docs/worker-events.md)."""
    if not config.ranks:
        return
    env = os.environ
    events.write(
        RankEvent(
            rank=rank_of_env(),
            local_rank=_int(env.get("LOCAL_RANK")),
            world_size=_int(env.get("WORLD_SIZE")),
            pid=os.getpid(),
            pgid=os.getpgid(0),
        )
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
