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


def run(options: ReportOptions) -> int:
    """Check the outputs first (a typo fails before anything is read), then render each.

    A missing, truncated or newer-schema session raises UsageError from ``load_report``.
    """
    outputs = plan_outputs(list(options.formats), list(options.outputs))
    report = load_report(options.session)
    emit(report, outputs, RenderOptions(source_root=options.source_root), github=options.github)
    return 0
