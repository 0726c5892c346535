"""Script failures: the verdict, and what to do about an asynchronous CUDA error.

A device-side assert or an illegal address is raised at the next call that waits for the
GPU (often a ``synchronize`` or ``.item()`` far from the culprit), not by the kernel that
faulted. The report says where it surfaced, gives the exact command that re-runs the
script with blocking launches (the error then surfaces at the launching line), and
``analyze --locate-async`` runs it and records the answer as a note (``NoteCode.ASYNC_LOCATED``).
"""

from __future__ import annotations

import shlex
from launchprof.analysis.notes import with_notes
from launchprof.events.lifecycle_events import NoteEvent, ScriptException
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note
from launchprof.model.core import Report

# Lower-case fragments of CUDA's messages for errors that are reported asynchronously.
ASYNC_MARKERS = (
    "device-side assert",
    "illegal memory access",
    "illegal address",
    "misaligned address",
    "unspecified launch failure",
    "kernel errors might be asynchronously reported",
)
# The start of a located note in runs recorded before notes had codes.
LOCATED = "the faulting kernel was launched at "


def is_async_cuda_error(exception: ScriptException | None) -> bool:
    text = " ".join(str(v or "") for v in (exception.message, exception.traceback) if exception is not None).lower()
    return any(m in text for m in ASYNC_MARKERS)


def blocking_command(script: str, argv: list[str]) -> str:
    """The command that re-runs the script with blocking launches, as the user would type it."""
    return "CUDA_LAUNCH_BLOCKING=1 " + shlex.join(["python", script, *argv])


def async_advice(exception: ScriptException, script: str, argv: list[str]) -> Note:
    return note(
        NoteCode.ASYNC_CUDA_ERROR, message=str(exception.message), file=exception.file or None,
        line=exception.line or None, command=blocking_command(script, argv), script=script,
    )


def async_exception(ev: Evidence) -> ScriptException | None:
    """The exception the script died of when it is an asynchronous CUDA error, else None."""
    end = ev.script_end
    if end is None or end.status != "exception" or not is_async_cuda_error(end.exception):
        return None
    return end.exception


def with_failure_advice(report: Report, ev: Evidence, script: str, argv: list[str]) -> Report:
    """Add the async-error advice to a report whose script died of one (unless already located)."""
    exception = async_exception(ev)
    if exception is None:
        return report
    if any(located(n) for n in report.findings):
        return report
    return with_notes(report, [async_advice(exception, script, argv)])


def located(finding: Note) -> bool:
    """A note that names the launching line: a --locate-async record, or, in a run recorded
    before notes had codes, the sentence it wrote then."""
    if finding.code == NoteCode.ASYNC_LOCATED:
        return True
    return finding.code == NoteCode.TEXT and str(finding.params.get("text", "")).startswith(LOCATED)


def located_note(exception: ScriptException | None) -> NoteEvent:
    """The note a ``--locate-async`` re-run adds to the run: the launching line, or that it
    stayed unknown."""
    if exception and exception.file and exception.line:
        return NoteEvent(code=NoteCode.ASYNC_LOCATED, params={"file": exception.file, "line": exception.line})
    return NoteEvent(code=NoteCode.ASYNC_NOT_LOCATED)
