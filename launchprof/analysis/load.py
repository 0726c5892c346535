"""A report from any saved file: a run file is re-analysed, a JSON report is read.

``report`` and ``compare`` both take either; a run goes ``load_run -> analyse`` with
the device profile :func:`choose_profile` picks (the one rule for analyze, report, compare
and the API), so its prediction is recomputed with today's rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchprof.errors import UsageError
from launchprof.fileio.input_files import REPORT, WANTED_SAVED, check_input_file, has_zip_signature, is_python_script, refuse_other_kind, starts_like_json
from launchprof.fileio.jsonfile import read_json_object
from launchprof.model.core import Report, validate_report
from launchprof.run import SUFFIX
from launchprof.run.migrate import migrate_report

if TYPE_CHECKING:  # the profile module loads only when a profile is read
    from launchprof.crossover.profile import DeviceProfile, Unloadable
    from launchprof.model.core import Machine


def load_report(path: str | Path) -> Report:
    """Read a JSON report; a missing, truncated, foreign or malformed file is a UsageError."""
    p = Path(path)
    check_input_file(p, "a JSON report", f"report file not found: {p}")
    data = read_json_object(p, "a launchprof report")
    refuse_other_kind(p, data, REPORT, WANTED_SAVED)
    try:
        return report_from_dict(data)
    except UsageError as exc:
        raise UsageError(f"{p}: {exc}") from None


def report_from_dict(data: dict[str, Any]) -> Report:
    """A report from parsed JSON of any version this launchprof reads: migrated, then validated."""
    return validate_report(migrate_report(data))


def is_run_file(path: Path) -> bool:
    """A run file by its zip signature whatever it is called, or by its name unless it holds
    JSON (a report copied to ``x.lprun`` is read as the report it is)."""
    return has_zip_signature(path) or (path.suffix == SUFFIX and not starts_like_json(path))


@dataclass(frozen=True)
class ChosenProfile:
    """The device profile a prediction uses, where it came from, and why it may not fit."""

    profile: DeviceProfile
    source: str
    warnings: tuple[str, ...] = ()


def choose_profile(
    machine: Machine | None, given: Path | None = None, stored: dict[str, Any] | None = None, unloadable: Unloadable | None = None,
) -> ChosenProfile | None:
    """The one rule for which device profile predicts, for analyze, report, compare and the API:

    1. the file given with ``--profile`` (a bad one is a UsageError, exit 2);
    2. the profile cached for exactly this GPU, driver and torch;
    3. the profile the run file carries (the one analyze predicted with);
    4. the closest other cached profile, with the warnings that say why it may not fit.

    An unreadable cache is skipped: it is a convenience, never a reason to fail. The exact
    cached file that does not load also goes to ``unloadable`` (analyze sets it aside)."""
    from launchprof.crossover import profile as device_profile

    if given is not None:
        loaded = device_profile.load_profile(given, machine)
        return ChosenProfile(loaded.profile, f"given: {given}", tuple(loaded.warnings))
    cached = None
    if machine is not None:
        try:
            cached = device_profile.find_cached_profile(machine, unloadable)
        except Exception:
            cached = None
    if cached is not None and not cached.warnings:
        return ChosenProfile(cached.profile, f"cached at {cached.path}")
    carried = stored_profile(stored)
    if carried is not None:
        return ChosenProfile(carried, "carried by the run file")
    if cached is not None:
        return ChosenProfile(cached.profile, f"cached at {cached.path}", tuple(cached.warnings))
    return None


def open_saved(path: Path, given: Path | None = None) -> tuple[Report, ChosenProfile | None]:
    """The report for ``path`` and the device profile it was analysed with, the run file read
    once: a run is re-analysed with ``given`` (``--profile``), else with the profile
    ``choose_profile`` picks for its machine; a JSON report is read as it is (``given`` is
    still loaded: it draws the HTML crossover curve). A missing or malformed file is a
    UsageError (exit 2)."""
    check_input_file(path, WANTED_SAVED, f"report or run file not found: {path}")
    if is_python_script(path):
        raise UsageError(f"{path} is a Python script, not a report or run file: `launchprof analyze {path}` runs scripts")
    if not is_run_file(path):
        report = load_report(path)
        return report, choose_profile(None, given) if given is not None else None
    from launchprof.analysis.build_report import analyse
    from launchprof.run import load_run

    run = load_run(path)
    chosen = choose_profile(None, given) if given is not None else choose_profile(run.header.machine, None, run.profile)
    return analyse(run, chosen.profile if chosen is not None else None), chosen


def report_from(path: Path) -> Report:
    """The report for ``path`` (a run file re-analysed, a JSON report read): open_saved."""
    return open_saved(path)[0]


def stored_profile(data: dict[str, Any] | None) -> DeviceProfile | None:
    """The device profile a run file carries (the one analyze predicted with), or None."""
    if not data:
        return None
    from launchprof.crossover.profile import profile_from_dict

    try:
        return profile_from_dict(data)
    except (UsageError, ValueError, TypeError, KeyError):
        return None
