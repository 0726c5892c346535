"""The report's two closed vocabularies, verdict and severity, each value with what every
format needs to show it (label, rich style, Markdown badge, SARIF level), so that no
renderer spells them again. Both are ``str`` enums: they compare equal to, and serialise
as, the contract's strings ("graphs-help", "error", ...).
"""

from __future__ import annotations

import enum
from typing import Any


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """The one severity order: errors first (0), then warnings, then info."""
        return {"error": 0, "warning": 1, "info": 2}[self.value]

    @property
    def blocks(self) -> bool:
        """An error or a warning: what makes a step unsafe to capture (``launchprof.check``,
        ``--fail-on warning``) and what compile can be said to have caught."""
        return self is not Severity.INFO

    @property
    def style(self) -> str:
        return {"error": "bold red", "warning": "yellow", "info": "cyan"}[self.value]

    @property
    def sarif_level(self) -> str:
        return {"error": "error", "warning": "warning", "info": "note"}[self.value]

    @property
    def github_command(self) -> str:
        """The GitHub Actions workflow command for an annotation of this severity."""
        return {"error": "error", "warning": "warning", "info": "notice"}[self.value]


def severity_rank(severity: str) -> int:
    """:attr:`Severity.rank` of a severity's string; a severity this version does not know
    (a report from a newer launchprof) sorts after every known one."""
    try:
        return Severity(severity).rank
    except ValueError:
        return len(Severity)


def hazard_order(hazard: Any) -> tuple[int, str, int, str]:
    """Sort key of hazards: most severe first, then by file, line and kind."""
    return (severity_rank(hazard.severity), hazard.file or "", hazard.line or 0, hazard.kind)


class Verdict(enum.StrEnum):
    GRAPHS_HELP = "graphs-help"
    MARGINAL = "marginal"
    GRAPHS_DONT_HELP = "graphs-dont-help"
    NOT_CAPTURABLE = "not-capturable"  # capture itself failed
    REPLAY_INVALID = "replay-invalid"  # captured, but the replay differs from eager
    EAGER_ONLY = "eager-only"
    SCRIPT_FAILED = "script-failed"
    STATIC_ONLY = "static-only"  # lint: nothing was measured

    @property
    def label(self) -> str:
        return {
            "graphs-help": "CUDA graphs help",
            "marginal": "no clear gain (marginal)",
            "graphs-dont-help": "CUDA graphs do not help",
            "not-capturable": "not capturable as it is",
            "replay-invalid": "captures, but the replay differs from eager",
            "eager-only": "eager profile only (no target captured)",
            "script-failed": "the script failed before a verdict",
            "static-only": "static check only (nothing was run)",
        }[self.value]

    @property
    def style(self) -> str:
        return {
            "graphs-help": "bold green",
            "marginal": "bold yellow",
            "graphs-dont-help": "bold red",
            "not-capturable": "bold red",
            "replay-invalid": "bold red",
            "eager-only": "bold blue",
            "script-failed": "bold red",
            "static-only": "bold blue",
        }[self.value]

    @property
    def badge(self) -> str:
        """Markdown badge; the ASCII fallback is the label itself."""
        return {
            "graphs-help": "✅",
            "marginal": "🟡",
            "graphs-dont-help": "❌",
            "not-capturable": "🚫",
            "replay-invalid": "⚠️",
            "eager-only": "ℹ️",
            "script-failed": "💥",
            "static-only": "🔎",
        }[self.value]
