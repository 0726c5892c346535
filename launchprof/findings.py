"""Findings as records: a stable ``code`` and typed ``params``, never a sentence.

Analysis and lint say what they found with a :class:`Note`; ``launchprof.render.notes_text``
turns each code into its sentence, with every number written by the one formatter. So the
words can change, and every format shows the same ones, while a JSON reader keeps the
code and the figures. A new finding is a member of :class:`NoteCode` plus its sentence in
the render module (a test checks that every code has one).

Plain dataclasses, no pydantic: lint builds its report without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Union

Scalar = Union[str, int, float, bool, None]
Param = Union[Scalar, list[Scalar]]


class NoteCode(StrEnum):
    """Every note code launchprof writes. Codes are a contract: add, never rename."""

    TEXT = "text"  # free text (the worker's own notes): params {"text": ...}
    STOPPED_EARLY = "stopped-early"
    ARGUMENT_SPREAD = "argument-spread"
    EAGER_TRACE_LOST = "eager-trace-lost"
    NO_GPU_ACTIVITY = "no-gpu-activity"
    COPIES_ONLY = "copies-only"
    NO_CUDA_WORK = "no-cuda-work"
    NO_DEVICE_PROFILE = "no-device-profile"
    IN_LOOP_SHORT = "in-loop-short"
    CALIBRATION_MEASURED = "calibration-measured"
    CALIBRATION_SKIPPED = "calibration-skipped"
    CALIBRATION_FAILED = "calibration-failed"
    HOST_SPEED_FAILED = "host-speed-failed"
    HOST_SPEED_SCALED = "host-speed-scaled"
    MEMORY_FOR_NO_GAIN = "memory-for-no-gain"
    EXTRA_GRAPH_NODES = "extra-graph-nodes"
    RACES_NOT_CHECKED = "races-not-checked"
    RACE_CHECK_STOPPED = "race-check-stopped"
    PARALLEL_BRANCHES = "parallel-branches"
    DEPENDENT_OPS = "dependent-ops"
    INDEPENDENT_CHAINS = "independent-chains"
    ONE_STREAM_CHAIN = "one-stream-chain"
    ASYNC_CUDA_ERROR = "async-cuda-error"
    SLOWEST_RANK = "slowest-rank"
    BUCKETS_NOT_MEASURED = "buckets-not-measured"
    BUCKET_POOL_OVER_LIMIT = "bucket-pool-over-limit"
    BUCKETS_OTHERS_VARY = "buckets-others-vary"
    LINT_CHECKED_ALL = "lint-checked-all"
    LINT_CHECKED_TARGETS = "lint-checked-targets"
    LINT_NO_TARGET = "lint-no-target"
    LINT_FILES_NOT_READ = "lint-files-not-read"
    LINT_FOLDERS_NOT_READ = "lint-folders-not-read"
    LINT_CALLS_NOT_FOLLOWED = "lint-calls-not-followed"
    LINT_SUPPRESSED = "lint-suppressed"
    LINT_FUNCTIONS_SKIPPED = "lint-functions-skipped"


@dataclass(frozen=True)
class Note:
    """One note of a report: what was found (``code``) and the figures it rests on."""

    code: str  # a NoteCode's value; a str, so a report from a newer launchprof still loads
    params: dict[str, Param] = field(default_factory=dict)


def note(code: NoteCode, **params: Param) -> Note:
    return Note(code.value, params)


def text_note(text: str) -> Note:
    """Free text that has no code of its own (a note the worker wrote)."""
    return Note(NoteCode.TEXT.value, {"text": text})
