"""A report from any saved file: a run file is re-analysed, a JSON report is read.

``report`` and ``compare`` both take either; a run goes ``load_run -> analyse`` with
the given device profile (else the one cached for the run's exact GPU, driver and torch),
so its prediction is recomputed with today's rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launchprof.errors import UsageError
from launchprof.models import Report
from launchprof.run import SUFFIX


def is_run_file(path: Path) -> bool:
    """A run file by its name, or by its zip signature whatever it is called."""
    if path.suffix == SUFFIX:
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def cached_profile(machine: Any) -> Any:
    """The cached device profile for exactly this machine, or None: another GPU's profile
    would predict for the wrong machine."""
    from launchprof.crossover import profile as device_profile

    if machine is None:
        return None
    try:
        cached = device_profile.find_cached_profile(machine)
    except UsageError:
        return None
    return cached.profile if cached is not None and not cached.warnings else None


def run_profile(path: Path) -> Any:
    """The device profile a run file would be re-analysed with when none is given: the
    cached one for its machine, else the one it carries; None for a JSON report."""
    if not path.is_file() or not is_run_file(path):
        return None
    from launchprof.run import load_run

    run = load_run(path)
    return cached_profile(run.header.machine) or stored_profile(run.profile)


def report_from(path: Path, profile: Any = None) -> Report:
    """The report for ``path``; a missing or malformed file is a UsageError (exit 2)."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder: give a run file (.lprun) or a JSON report")
    if not path.is_file():
        raise UsageError(f"report or run file not found: {path}")
    if not is_run_file(path):
        from launchprof.session import load_report

        return load_report(path)
    from launchprof.analysis import analyse
    from launchprof.run import load_run

    run = load_run(path)
    if profile is None:
        profile = cached_profile(run.header.machine) or stored_profile(run.profile)
    return analyse(run, profile)


def stored_profile(data: dict[str, Any] | None) -> Any:
    """The device profile a run file carries (the one analyze predicted with), or None."""
    if not data:
        return None
    from launchprof.crossover.profile import profile_from_dict

    try:
        return profile_from_dict(data)
    except (UsageError, ValueError, TypeError, KeyError):
        return None
