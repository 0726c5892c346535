"""``launchprof lint PATH...``: static capture-hazard check, no GPU and no torch needed.

Options are checked first (usage errors exit 2 before any work), then the files are
linted, the report (same shape as ``analyze``'s, ``mode="lint"``, verdict
``static-only``) is rendered to every requested output, and ``--fail-on`` decides
the exit code.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from launchprof.version import __version__
from launchprof.commands.checks import check_project_root
from launchprof.enums import Verdict
from launchprof.errors import ExitCode, UsageError
from launchprof.model.findings import Note, NoteCode, note
from launchprof.lint import LintResult, lint
from launchprof.fileio.output_files import Output, plan_outputs
from launchprof.lint.lint_config import configured_excludes
from launchprof.common.project import find_project_root
from launchprof.common.targets import parse_target

if TYPE_CHECKING:
    from launchprof.model.core import Report

LINT_FAIL_ON = ("never", "error", "warning")
NO_TARGET = (
    "nothing to check: no function is marked @launchprof.target; mark the step with @launchprof.target, "
    "name it with --target NAME, or check every function with --all"
)
# Beyond this many unresolved calls the footer names the first ones and a count.
MAX_UNRESOLVED_NAMED = 10
# Beyond this many targets the report's ``target`` field names the first ones and a count.
MAX_TARGETS_NAMED = 10


@dataclass(frozen=True)
class LintOptions:
    paths: tuple[Path, ...]
    target: str | None
    all_functions: bool
    formats: tuple[str, ...]
    outputs: tuple[Path, ...]
    fail_on: str
    project_root: Path | None
    github: bool
    exclude: tuple[str, ...] = ()
    strict: bool = False


def run(options: LintOptions) -> int:
    """Lint, render, and return the exit code (0, or 1 when ``--fail-on`` trips).

    The renderers (rich) are imported while worker processes lint, or before a one-process
    lint, never before workers start: forked workers then start small and early. The
    report models are plain dataclasses, so no format loads pydantic.
    """
    fail_on = options.fail_on
    if fail_on not in LINT_FAIL_ON:  # checked before any work
        from launchprof.commands.failon import check_choice

        check_choice(fail_on, LINT_FAIL_ON)
    if options.target is not None:
        parse_target(options.target)  # a malformed name: the same one-line error as analyze's
    if options.target is not None and options.all_functions:
        raise UsageError("--target and --all exclude each other: check one function (and what it calls) or all of them")
    if not options.paths:
        raise UsageError("give at least one file or folder to lint")
    outputs = plan_outputs(list(options.formats), list(options.outputs), inputs=options.paths)
    check_project_root(options.project_root)
    root = find_project_root(options.paths[0], options.project_root)
    exclude = (*options.exclude, *configured_excludes(root))
    result = lint(
        options.paths,
        options.target,
        options.all_functions,
        project_root=root,
        exclude=exclude,
        strict=options.strict,
        meanwhile=lambda: _import_report_modules(outputs),
    )
    if not result.targets and not options.all_functions:
        raise UsageError(NO_TARGET)
    for warning in result.unknown_ignores:
        print(f"launchprof: warning: {warning}", file=sys.stderr)
    report = build_report(result, options, result.seconds)
    from launchprof.commands.emit import emit
    from launchprof.commands.failon import fail_reason
    from launchprof.render import RenderOptions

    emit(report, outputs, RenderOptions(project_root=root), github=options.github)
    reason = fail_reason(report, fail_on)
    if reason:
        print(f"launchprof: {reason}", file=sys.stderr)
        return int(ExitCode.FAIL_ON)
    return int(ExitCode.OK)


def _import_report_modules(outputs: list[Output]) -> None:
    """Import what building and rendering the report will need: the report models, the
    hazard kinds, ``emit``, ``--fail-on`` and the renderers of the chosen formats."""
    import launchprof.commands.emit  # noqa: F401
    import launchprof.commands.failon  # noqa: F401
    import launchprof.hazards.kinds  # noqa: F401
    import launchprof.model.core  # noqa: F401
    from launchprof.render import renderer_for

    for fmt in sorted({"text", *(o.format for o in outputs)}):
        renderer_for(fmt)  # imports its module


def build_report(result: LintResult, options: LintOptions, seconds: float) -> Report:
    """The lint result as a report: nothing measured, hazards marked ``source="static"``."""
    from launchprof.model.core import SCHEMA_VERSION, Machine, Report
    from launchprof.render.words.notes_text import note_texts

    records = _notes(result, options, seconds)

    return Report(
        schema_version=SCHEMA_VERSION,
        launchprof_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        machine=Machine(gpu=None, driver=None, cuda=None, torch=None, python=platform.python_version()),
        script=" ".join(str(p) for p in options.paths),
        target=None if options.all_functions else _target_names(result),
        verdict=Verdict.STATIC_ONLY,
        eager=None,
        replay=None,
        speedup=None,
        breakeven_replays=None,
        predicted_speedup=None,
        validation=None,
        hazards=list(result.hazards),
        buckets=None,
        notes=note_texts(records),
        findings=records,
        mode="lint",
    )


def _target_names(result: LintResult) -> str | None:
    if not result.targets:
        return None
    several_modules = len({t.module for t in result.targets}) > 1
    names = list(dict.fromkeys(t.display if several_modules else t.qualname for t in result.targets))
    if len(names) > MAX_TARGETS_NAMED:
        return ", ".join(names[:MAX_TARGETS_NAMED]) + f" and {len(names) - MAX_TARGETS_NAMED} more"
    return ", ".join(names)


def _notes(result: LintResult, options: LintOptions, seconds: float) -> list[Note]:
    scanned = {"files": result.files, "lines": result.lines, "seconds": seconds}
    if options.all_functions:
        notes = [note(NoteCode.LINT_CHECKED_ALL, functions=result.functions, **scanned)]
    elif result.targets:
        followed = result.functions - len({t.display for t in result.targets})
        notes = [note(NoteCode.LINT_CHECKED_TARGETS, targets=len(result.targets), followed=max(followed, 0), **scanned)]
    else:
        notes = [note(NoteCode.LINT_NO_TARGET, **scanned)]
    if result.unreadable:
        notes.append(note(NoteCode.LINT_FILES_NOT_READ, count=len(result.unreadable), names=list(result.unreadable[:5])))
    if result.unlisted:
        notes.append(note(NoteCode.LINT_FOLDERS_NOT_READ, count=len(result.unlisted), names=list(result.unlisted[:5])))
    if result.unresolved:
        more = max(len(result.unresolved) - MAX_UNRESOLVED_NAMED, 0)
        notes.append(note(NoteCode.LINT_CALLS_NOT_FOLLOWED, count=len(result.unresolved), names=list(result.unresolved[:MAX_UNRESOLVED_NAMED]), more=more))
    if result.suppressed:
        notes.append(note(NoteCode.LINT_SUPPRESSED, count=result.suppressed))
    if result.skipped:
        notes.append(note(NoteCode.LINT_FUNCTIONS_SKIPPED, count=len(result.skipped), names=list(result.skipped[:5])))
    return notes
