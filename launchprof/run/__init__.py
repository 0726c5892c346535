"""The run file (``NAME.lprun``): write, load, migrate. See :mod:`launchprof.run.file`.

Its reader and writer (pydantic, the report models, every event record) load on first use,
through this package's ``__getattr__``: ``analyze`` decides where the run file goes before
its worker starts, and the worker should not wait for modules that only read runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from launchprof.run.store import SUFFIX, default_run_path, in_kept_runs, prune

if TYPE_CHECKING:
    from launchprof.run.file import Run, load_run, raw_samples, write_run

_IN_FILE = ("Run", "load_run", "raw_samples", "write_run")


def __getattr__(name: str) -> Any:
    if name in _IN_FILE:
        return getattr(importlib.import_module("launchprof.run.file"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SUFFIX", "Run", "default_run_path", "in_kept_runs", "load_run", "prune", "raw_samples", "write_run"]
