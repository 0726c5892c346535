"""What every fix writer shares: the context it reads and how it says "I cannot"."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from launchprof.events.record import Site
from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.model.hazard_identity import without_comment
from launchprof.hazards.fixes.fix_source import SourceLine
from launchprof.hazards.kinds import KINDS
from launchprof.model.hazard_records import Fix
from launchprof.render.words.fix_text import fix_note
from launchprof.common.source import lines_of


@dataclass(frozen=True)
class FixContext:
    """Facts about the run a writer may need beyond the line itself."""

    scalar_args: frozenset[str] = frozenset()  # target arguments that are Python numbers
    functions: tuple[Site, ...] = ()  # user functions the probe call ran (file, line, function)
    call_site: Site | None = None  # the line that first called the target
    extra: dict = field(default_factory=dict)


def make(
    src: SourceLine, after: str, code: FixCode, params: dict[str, Param] | None = None,
    before: str | None = None, line: int | None = None, indent: str | None = None,
) -> Fix:
    """A written fix for ``src`` (or for ``line`` of the same file); its note says ``code``."""
    params = params or {}
    return Fix(
        before=before if before is not None else src.code, after=after, note=fix_note(code, params), file=src.file, line=line or src.line,
        indent=src.indent if indent is None else indent, code=code.value, params=params,
    )


def cannot(src: SourceLine, kind: str, reason: FixReason = FixReason.NONE, **figures: Param) -> Fix:
    """Say plainly that this line's fix was not written, and give the rule: never a guessed fix that reads as a real one."""
    params: dict[str, Param] = {"kind": kind, "reason": reason.value, **figures}
    note = fix_note(FixCode.CANNOT, params, KINDS[kind].hint if kind in KINDS else None)
    return Fix(before=src.code, after="", note=note, file=src.file, line=src.line, indent=src.indent, code=FixCode.CANNOT.value, params=params)


def statement_text(src: SourceLine, first: int, last: int) -> str:
    """Lines ``first``..``last`` of the file, dedented, without trailing blank space."""
    lines = lines_of(src.file or "")[first - 1 : last]
    kept = []
    for raw in lines:  # each line without its comment, indentation kept
        body = without_comment(raw)
        kept.append(raw[: len(raw) - len(raw.lstrip())] + body + "\n" if body else "\n")
    return textwrap.dedent("".join(kept)).rstrip()


def indent_of(src: SourceLine, line: int) -> str:
    lines = lines_of(src.file or "")
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    return raw[: len(raw) - len(raw.lstrip())]
