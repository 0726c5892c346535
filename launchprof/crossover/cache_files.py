"""Where device profiles are cached, and a look at a cached one without the profile models.

Split from ``profile`` so that it imports the standard library only: analyze's worker asks
on every run whether this GPU/driver/torch already has a profile, and importing pydantic
and the profile models to answer "yes" cost about 0.2 s on the H200, a tenth of a short
script's wall time. A file this look accepts can still fail the full validation; the CLI,
which loads the profile fully, sets such a file aside (:func:`set_aside`) so that the
next run measures again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from launchprof.fileio.input_files import PROFILE, json_kind

SCHEMA_VERSION = 2  # 2: per-coefficient spread across rounds, noisy flag, Series.round
KEY_FIELDS = ("gpu", "driver", "torch")  # what a cached profile is keyed by


class MachineKey(Protocol):
    """What the cache is keyed by: a profile's Machine has these, among others."""

    @property
    def gpu(self) -> str | None: ...

    @property
    def driver(self) -> str | None: ...

    @property
    def torch(self) -> str | None: ...


def cache_dir() -> Path:
    """Where profiles are cached: $LAUNCHPROF_CACHE_DIR/profiles, else the XDG cache.

    ``LAUNCHPROF_CACHE_DIR`` is launchprof's whole cache folder (CI can point it at a
    workspace); otherwise ``$XDG_CACHE_HOME/launchprof`` or ``~/.cache/launchprof``.
    """
    root = os.environ.get("LAUNCHPROF_CACHE_DIR")
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "launchprof"
    return base / "profiles"


def slug(gpu: str | None, driver: str | None, torch: str | None) -> str:
    """A file-name-safe key for one GPU/driver/torch, e.g. ``nvidia-h200_driver-580.95_torch-2.11.0-cu130``."""
    parts = [gpu or "unknown-gpu", f"driver-{driver or 'unknown'}", f"torch-{torch or 'unknown'}"]
    return "_".join(re.sub(r"[^a-z0-9.]+", "-", p.lower()).strip("-") for p in parts)


def profile_slug(machine: MachineKey) -> str:
    return slug(machine.gpu, machine.driver, machine.torch)


def cache_path(machine: MachineKey) -> Path:
    return cache_dir() / f"{profile_slug(machine)}.json"


def event_cache_path(machine: Mapping[str, Any]) -> Path | None:
    """:func:`cache_path` for the worker's machine event, without building the profile's
    Machine; None when a key field is not text (the Machine would refuse it)."""
    key = [machine.get(name) for name in KEY_FIELDS]
    if not all(value is None or isinstance(value, str) for value in key):
        return None
    return cache_dir() / f"{slug(*key)}.json"


@dataclasses.dataclass(frozen=True)
class CachedEntry:
    """What the worker needs of a cached profile: where it is and whether it is measured again."""

    path: Path
    plan: str | None
    noisy: bool
    rechecked: bool


def version_supported(version: Any) -> bool:
    """A profile schema_version this launchprof reads (a bool is not a version)."""
    return isinstance(version, int) and not isinstance(version, bool) and 1 <= version <= SCHEMA_VERSION


def _has_graph_coefficients(data: Mapping[str, Any]) -> bool:
    """The replay coefficients a calibration must measure: without them no prediction is made."""
    return data.get("graph_launch_fixed_us") is not None and (data.get("graph_node_us") is not None or data.get("floor_node_us") is not None)


def read_cached(path: Path) -> CachedEntry | None:
    """``path`` when it looks like a usable device profile (a JSON object of a supported
    schema_version that holds the graph replay coefficients), else None. The files that
    ``profile.load_profile`` refuses are refused here, up to the fields' types, and so is a
    profile without replay coefficients (an interrupted ``crossover`` leaves one): the
    calibration measures this GPU again and its profile takes that file's place."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark is allowed
    except (OSError, ValueError, RecursionError):  # unreadable, not text, not JSON, nested too deep
        return None
    if not isinstance(data, dict) or json_kind(data) != PROFILE or not version_supported(data.get("schema_version")):
        return None
    if not _has_graph_coefficients(data):
        return None
    plan = data.get("plan")
    return CachedEntry(path, plan if isinstance(plan, str) else None, data.get("noisy") is True, data.get("rechecked") is True)


def set_aside(path: Path) -> Path | None:
    """Rename a cached profile that does not load to ``<name>.bad``, out of the cache's
    ``*.json``, so that the worker measures this machine again; None when it cannot."""
    bad = path.with_name(path.name + ".bad")
    try:
        os.replace(path, bad)
    except OSError:
        return None
    return bad
