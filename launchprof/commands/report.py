"""``launchprof report RUN.lprun | REPORT.json``: re-render a saved analysis, no GPU needed.

A run file is re-analysed with this launchprof's rules and the device profile given by
``--profile`` (else the one cached for the run's machine), so the prediction is
recomputed; a JSON report is rendered as it is (launchprof.analysis.load).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from launchprof.analysis.load import report_from
from launchprof.commands.emit import emit
from launchprof.outputs import plan_outputs
from launchprof.render import RenderOptions


@dataclass(frozen=True)
class ReportOptions:
    session: Path
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]
    project_root: Path | None
    github: bool
    profile: Path | None = None
    explain: bool = False


def run(options: ReportOptions) -> int:
    """Check the outputs first (a typo fails before anything is read), then render each.

    A missing, truncated, malformed or newer-schema file raises UsageError (exit 2)."""
    outputs = plan_outputs(list(options.formats), list(options.outputs))
    profile = None
    if options.profile is not None:
        from launchprof.crossover.profile import load_profile

        profile = load_profile(options.profile).profile
    report = report_from(options.session, profile)
    root = options.project_root or (Path(report.project_root) if report.project_root else None)
    render = RenderOptions(source_root=root, device_profile=profile.to_dict() if profile is not None else None, explain=options.explain)
    emit(report, outputs, render, github=options.github)
    return 0
