"""``launchprof report RUN.lprun | REPORT.json``: re-render a saved analysis, no GPU needed.

A run file is re-analysed (``load_run -> analyse``) with this launchprof's rules and the
device profile given by ``--profile`` (else the one cached for the run's machine), so the
prediction is recomputed; a JSON report is rendered as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchprof.commands.emit import emit
from launchprof.errors import UsageError
from launchprof.models import Report
from launchprof.outputs import plan_outputs
from launchprof.render import RenderOptions
from launchprof.run import SUFFIX
from launchprof.session import load_report


@dataclass(frozen=True)
class ReportOptions:
    session: Path
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]
    project_root: Path | None
    github: bool
    profile: Path | None = None


def is_run_file(path: Path) -> bool:
    """A run file by its name, or by its zip signature whatever it is called."""
    if path.suffix == SUFFIX:
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def load_any(path: Path, profile_path: Path | None) -> tuple[Report, Any]:
    """The report for ``path`` (run file or JSON report) and the device profile used."""
    from launchprof.crossover import profile as device_profile

    profile = device_profile.load_profile(profile_path).profile if profile_path is not None else None
    if not is_run_file(path):
        return load_report(path), profile
    from launchprof.analysis import analyse
    from launchprof.run import load_run

    run = load_run(path)
    if profile is None and run.header.machine is not None:
        try:
            cached = device_profile.find_cached_profile(run.header.machine)
        except UsageError:
            cached = None
        # Only an exact match for the run's GPU, driver and torch: another GPU's profile would
        # predict for the wrong machine.
        profile = cached.profile if cached is not None and not cached.warnings else None
    return analyse(run, profile), profile


def run(options: ReportOptions) -> int:
    """Check the outputs first (a typo fails before anything is read), then render each.

    A missing, truncated, malformed or newer-schema file raises UsageError (exit 2)."""
    outputs = plan_outputs(list(options.formats), list(options.outputs))
    if not options.session.is_file():
        raise UsageError(f"report or run file not found: {options.session}")
    report, profile = load_any(options.session, options.profile)
    root = options.project_root or (Path(report.project_root) if report.project_root else None)
    render = RenderOptions(source_root=root, device_profile=profile.to_dict() if profile is not None else None)
    emit(report, outputs, render, github=options.github)
    return 0
