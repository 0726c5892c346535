"""``launchprof report SESSION.json``: re-render a saved analysis in any format, no GPU needed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from launchprof.commands.emit import emit
from launchprof.outputs import plan_outputs
from launchprof.render import RenderOptions
from launchprof.session import load_report


@dataclass(frozen=True)
class ReportOptions:
    session: Path
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]
    source_root: Path | None
    github: bool
    profile: Path | None = None


def run(options: ReportOptions) -> int:
    """Check the outputs first (a typo fails before anything is read), then render each.

    A missing, truncated or newer-schema session raises UsageError from ``load_report``.
    """
    outputs = plan_outputs(list(options.formats), list(options.outputs))
    report = load_report(options.session)
    device_profile = None
    if options.profile is not None:
        from launchprof.crossover.profile import load_profile

        device_profile = load_profile(options.profile).profile.to_dict()
    emit(report, outputs, RenderOptions(source_root=options.source_root, device_profile=device_profile), github=options.github)
    return 0
