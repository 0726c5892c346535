"""One severity order (``launchprof.enums``): analysis, the multi-GPU combine,
``launchprof.check`` and the renderers sort hazards by the same rule, errors first."""

from __future__ import annotations

from types import SimpleNamespace

from launchprof.enums import hazard_order, severity_rank
from launchprof.render.paths import sorted_hazards


def found(severity: str, file: str | None = None, line: int | None = None, kind: str = "hidden-sync") -> SimpleNamespace:
    return SimpleNamespace(severity=severity, file=file, line=line, kind=kind)


def test_most_severe_first_then_file_line_and_kind():
    hazards = [
        found("info", "a.py", 1),
        found("warning", "b.py", 2),
        found("error", "b.py", 9, "rng-state"),
        found("error", "b.py", 9),
        found("error"),
        found("error", "a.py", 30),
    ]
    ordered = [(h.severity, h.file, h.line, h.kind) for h in sorted(hazards, key=hazard_order)]
    assert ordered == [
        ("error", None, None, "hidden-sync"),
        ("error", "a.py", 30, "hidden-sync"),
        ("error", "b.py", 9, "hidden-sync"),
        ("error", "b.py", 9, "rng-state"),
        ("warning", "b.py", 2, "hidden-sync"),
        ("info", "a.py", 1, "hidden-sync"),
    ]


def test_an_unknown_severity_sorts_last_and_renderers_keep_the_found_order_within_one():
    assert [severity_rank(s) for s in ("error", "warning", "info", "fatal")] == [0, 1, 2, 3]
    hazards = [found("fatal"), found("warning", "z.py", 9), found("error", "b.py"), found("warning", "a.py", 1)]
    assert sorted_hazards(hazards) == [hazards[2], hazards[1], hazards[3], hazards[0]]
