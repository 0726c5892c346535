"""Findings as records: a stable ``code`` and typed ``params``, never a sentence.

Analysis and lint say what they found with a :class:`Note`; ``launchprof.render.words.notes_text``
turns each code into its sentence, with every number written by the one formatter. So the
words can change, and every format shows the same ones, while a JSON reader keeps the
code and the figures. A new finding is a member of :class:`NoteCode` plus its sentence in
the render module (a test checks that every code has one).

Fixes and the prediction are records too, with codes of their own: :class:`FixCode` worded
by ``launchprof.render.words.fix_text``, :class:`PredictionCode` by
``launchprof.render.words.prediction_text``. The bucket plan's choice is a note
(``NoteCode.BUCKET_CHOICE``).

Plain dataclasses, no pydantic: lint builds its report without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from launchprof.events.record import Param  # what a record's params may hold: one definition for events and findings



class NoteCode(StrEnum):
    """Every note code launchprof writes. Codes are a contract: add, never rename."""

    TEXT = "text"  # free text (a note recorded before the worker wrote codes): params {"text": ...}
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
    NO_STREAM_ADVICE = "no-stream-advice"  # why: "backward" (the step runs it) or "kept-autograd-graph"
    ASYNC_CUDA_ERROR = "async-cuda-error"
    SLOWEST_RANK = "slowest-rank"
    BUCKETS_NOT_MEASURED = "buckets-not-measured"
    BUCKET_POOL_OVER_LIMIT = "bucket-pool-over-limit"
    BUCKETS_OTHERS_VARY = "buckets-others-vary"
    BUCKET_CHOICE = "bucket-choice"  # the plan's choice in one line (BucketPlan.explanation)
    PADDING_LEAKS = "padding-leaks"  # how to make padding safe (BucketPlan.fix)
    LINT_CHECKED_ALL = "lint-checked-all"
    LINT_CHECKED_TARGETS = "lint-checked-targets"
    LINT_NO_TARGET = "lint-no-target"
    LINT_FILES_NOT_READ = "lint-files-not-read"
    LINT_FOLDERS_NOT_READ = "lint-folders-not-read"
    LINT_CALLS_NOT_FOLLOWED = "lint-calls-not-followed"
    LINT_SUPPRESSED = "lint-suppressed"
    LINT_FUNCTIONS_SKIPPED = "lint-functions-skipped"
    # The step's in-loop and burst medians differ by more than analysis.notes.TIMINGS_DISAGREE_RATIO:
    # eager_burst_us, eager_loop_us, replay_burst_us, replay_loop_us (None where unmeasured), ratio
    TIMINGS_DISAGREE = "timings-disagree"
    # The script was stopped once the measurement was complete (worker/early_stop.py): calls, the
    # script's calls of the target before the stop
    STOPPED_WHEN_MEASURED = "stopped-when-measured"
    # The eager figures come from the captured graph and CUDA events, not a profiler trace:
    # why (a FiguresWhy), reason (the profiler plan's reason, where one profiled)
    FIGURES_FROM_GRAPH = "figures-from-graph"
    # The worker's own notes (NoteEvent's code and params); "error" is the exception's
    # "Type: message" as the worker caught it.
    INTERNAL_ERROR = "internal-error"  # error
    BURSTS_NOT_STARTED = "bursts-not-started"  # error
    BURSTS_STOPPED = "bursts-stopped"  # error
    STATE_NOT_RESTORED = "state-not-restored"  # after (a RestoredAfter), error
    HOST_SPEED_NOT_MEASURED = "host-speed-not-measured"  # reason (a HostSpeedMissing), error
    REPROFILED = "reprofiled"
    TRACE_NOT_WRITTEN = "trace-not-written"  # error
    WHOLE_SCRIPT_PROFILE_LOST = "whole-script-profile-lost"  # error
    CANDIDATES_NOT_RANKED = "candidates-not-ranked"  # error
    OUTPUT_WATCH_STOPPED = "output-watch-stopped"  # error
    MEASUREMENT_NOT_CLOSED = "measurement-not-closed"  # error
    STREAM_CHECK_FAILED = "stream-check-failed"  # error
    FIX_TRIALS_FAILED = "fix-trials-failed"  # error: the fixes could not be tried (worker/fix_trials.py)
    SANITIZER_IMPORTED = "sanitizer-imported"
    COMPILE_KERNELS_NOT_COUNTED = "compile-kernels-not-counted"  # mode, error
    COMPILE_FRAMES_IN_TIMING = "compile-frames-in-timing"  # mode, frames
    COMPILE_SKIPPED_RANKS = "compile-skipped-ranks"
    COMPILE_SKIPPED_NO_CALLS = "compile-skipped-no-calls"
    COMPILE_STATE_NOT_SAVED = "compile-state-not-saved"  # error
    COMPILE_ROUND_FAILED = "compile-round-failed"  # mode, round, timed_out
    BUCKETS_NOT_SET_UP = "buckets-not-set-up"  # error
    BUCKET_MEASUREMENT_STOPPED = "bucket-measurement-stopped"  # error
    BUCKETS_SHAPES_SAME = "buckets-shapes-same"
    BUCKETS_UNMEASURABLE = "buckets-unmeasurable"  # reason (a BucketsUnmeasurable), sizes
    ASYNC_LOCATED = "async-located"  # file, line: where --locate-async's re-run raised
    ASYNC_NOT_LOCATED = "async-not-located"
    STATE_LOST = "state-lost"  # after (a RestoredAfter), paths, whys (a LostWhy each), count, stopped
    STATE_NOT_COVERED = "state-not-covered"  # paths, whys (an UncoveredWhy each), count
    STOP_NOT_AGREED = "stop-not-agreed"  # error: the ranks' agreement where to stop the script failed


# Notes that describe how a figure was measured or computed, with nothing for the reader to
# do: the terminal and Markdown show them with --explain only (JSON and HTML always keep them).
# A note of another code is actionable unless its record says otherwise (Note.actionable).
DESCRIPTIVE: frozenset[str] = frozenset(code.value for code in (
    NoteCode.STOPPED_EARLY, NoteCode.IN_LOOP_SHORT, NoteCode.CALIBRATION_MEASURED, NoteCode.CALIBRATION_SKIPPED,
    NoteCode.HOST_SPEED_FAILED, NoteCode.HOST_SPEED_SCALED, NoteCode.HOST_SPEED_NOT_MEASURED, NoteCode.EXTRA_GRAPH_NODES,
    NoteCode.PARALLEL_BRANCHES, NoteCode.DEPENDENT_OPS, NoteCode.ONE_STREAM_CHAIN, NoteCode.NO_STREAM_ADVICE,
    # Stream advice is actionable only where its saving passes the thresholds (analysis.concurrency),
    # which sets it on the record; one recorded before that has no estimate to pass them.
    NoteCode.INDEPENDENT_CHAINS,
    NoteCode.REPROFILED, NoteCode.SLOWEST_RANK, NoteCode.TIMINGS_DISAGREE,
    NoteCode.MEMORY_FOR_NO_GAIN,  # the headline and the graph memory row say it already
    NoteCode.FIGURES_FROM_GRAPH,
))  # fmt: skip


class RestoredAfter(StrEnum):
    """What ran on the user's state before it could not be restored (STATE_NOT_RESTORED)."""

    BURSTS = "bursts"
    COMPILE = "compile"
    BUCKETS = "buckets"
    CAPTURE = "capture"  # the capture's warm-up calls, the capture and its second capture
    VALIDATION = "validation"  # a validation's eager call and replay
    PROFILED_REPLAY = "profiled-replay"
    PROFILED_EAGER = "profiled-eager"  # the recorded eager calls profiled after the plan
    STREAM_CHECK = "stream-check"
    FIX_TRIAL = "fix-trial"  # a written fix tried on the recorded calls


class FiguresWhy(StrEnum):
    """Why the eager figures were derived rather than profiled (FIGURES_FROM_GRAPH)."""

    NOT_NEEDED = "not-needed"  # the worker's plan: the step captured, no profiler session was needed
    TRACE_MISSING = "trace-missing"  # a session was planned (its reason in the note) and left no eager trace
    NO_TRACE = "no-trace"  # no plan recorded, and no eager trace in the run


class LostWhy(StrEnum):
    """Why changed state could not be put back (STATE_LOST): worker/saved_state.Lost."""

    NOT_CLONED = "not-cloned"  # a tensor not seen mutated before, or over the clone budget
    GENERATOR = "generator"  # a generator object the extra calls advanced
    RESTORE_FAILED = "restore-failed"  # putting it back raised


class UncoveredWhy(StrEnum):
    """Why reachable state cannot be saved (STATE_NOT_COVERED): worker/reach.Uncovered."""

    OPAQUE = "opaque"  # its state lives in C
    GENERATOR = "generator"
    ITERATOR = "iterator"
    BUDGET = "budget"  # past the walk's limits, or too big to copy
    LONG = "long"  # a container too long to walk, with mutable elements


class HostSpeedMissing(StrEnum):
    """Why the host's speed is missing (HOST_SPEED_NOT_MEASURED)."""

    SAMPLER_FAILED = "sampler-failed"  # error: the sampler could not start
    SAMPLE_FAILED = "sample-failed"  # error
    NO_SAMPLE = "no-sample"


class BucketsUnmeasurable(StrEnum):
    """Why the bucket plan cannot be measured in this run (BUCKETS_UNMEASURABLE)."""

    NOT_CAPTURED = "not-captured"
    NO_RECORDED_CALL = "no-recorded-call"
    TOO_MANY_SIZES = "too-many-sizes"  # sizes
    DISTRIBUTED = "distributed"


class FixCode(StrEnum):
    """What a written fix (``models.Fix``) does; ``launchprof.render.words.fix_text`` words each.

    A fix whose ``before`` joins lines that are apart in the file also has the param
    ``before_lines`` (each file line it holds), so a format that replaces one region skips it."""

    CANNOT = "cannot"  # no fix written: params kind, reason (a FixReason), and the reason's figures
    MISMATCH_CAUSES = "mismatch-causes"  # a replay mismatch points at the causes' fixes: kinds, lines
    WHERE_SELECT = "where-select"  # both values, selected with torch.where: scalars (names to make tensors)
    COND_BRANCHES = "cond-branches"  # torch.cond captures both branches: scalars
    MASK_LATER_USE = "mask-later-use"  # nonzero plus its later use, both rewritten: line, use_line
    NONZERO_MASK = "nonzero-mask"
    MASK_ASSIGN = "mask-assign"
    MASK_READ = "mask-read"
    PINNED_COPY = "pinned-copy"
    SCALAR_TENSOR = "scalar-tensor"  # name, tensor
    REBIND_IN_PLACE = "rebind-in-place"  # line, name; kept_by, kept_line: a container that keeps the tensor (the in-place form aliases it)
    MUTATED_ARGUMENT = "mutated-argument"  # argument
    DEVICE_COUNTER = "device-counter"  # name
    MOVED_TO_CALLER = "moved-to-caller"
    CUDA_RNG = "cuda-rng"
    JOIN_AFTER_BLOCK = "join-after-block"  # side, line (the end of the side stream's block)
    JOIN_BEFORE_RETURN = "join-before-return"  # side
    SYNC_OUTSIDE = "sync-outside"
    PRINT_OUTSIDE = "print-outside"
    TO_HOST_AFTER_REPLAY = "to-host-after-replay"  # reads (the calls dropped)
    KEEP_ON_DEVICE = "keep-on-device"  # reads
    DETACH_RETURN = "detach-return"  # name, line: the caller's name that held the graph, and its line
    DROP_KEPT_GRAPH = "drop-kept-graph"  # name (None: no name found), line
    CAPTURABLE_OPTIMIZER = "capturable-optimizer"  # optimizer, written (at its constructor)
    GRAD_SCALER_OPTIONS = "grad-scaler-options"  # options (ranked), optimizer, variable, partial_speedup, written
    OFF_LEGACY_STREAM = "off-legacy-stream"  # op
    KEEP_ON_DEVICE_LATER_USE = "keep-on-device-later-use"  # reads, name, line, use_lines, value (the name written in its place, or None)
    WHERE_RETURN = "where-return"  # both branches return: one return of torch.where; scalars
    MOVED_TOGETHER = "moved-together"  # host effects that read each other's names: lines, names, call_line
    CLONE_KEPT = "clone-kept"  # the line that keeps an output, with .clone(): holder, output
    RACE_JOIN_FIRST = "race-join-first"  # the later join moved before the racing access: line, join_line, side
    RACE_WAIT = "race-wait"  # a wait added before the racing access: line, earlier_line, side


class FixReason(StrEnum):
    """Why no fix was written for a line (``FixCode.CANNOT``'s ``reason``)."""

    NONE = ""  # no reason beyond the kind's general rule
    NO_LINE = "no-line"
    READ_ERROR = "read-error"  # error: the exception's type name
    LONGER_STATEMENT = "longer-statement"
    NOT_PLAIN_FORK = "not-plain-fork"
    NO_MASK = "no-mask"
    NO_COPY_CALL = "no-copy-call"
    REBINDING_IN_STATEMENT = "rebinding-in-statement"
    NOT_PLAIN_ASSIGNMENT = "not-plain-assignment"
    NO_HOST_READ = "no-host-read"
    ARGUMENT_UNNAMED = "argument-unnamed"
    NAME_NOT_ON_LINE = "name-not-on-line"  # name
    TENSOR_LOOP = "tensor-loop"
    NO_IF = "no-if"
    SEVERAL_NAMES = "several-names"
    IN_LIBRARY = "in-library"  # the line calls into a library where it happens: library (path:line)
    HOST_VALUE_USED = "host-value-used"  # name, use_line: a later line needs the value as a Python number
    SHAPES_VARY = "shapes-vary"  # the fix is one graph per shape bucket, in the caller
    KEPT_NOT_APPEND = "kept-not-append"  # holder: the output is kept by something other than one append
    EFFECTS_READ_LOCALS = "effects-read-locals"  # lines, names: effects that depend on each other read the step's values
    NO_CAUSE_FOUND = "no-cause-found"  # a replay mismatch with no frozen state found behind it
    NOT_MOVABLE_EFFECT = "not-movable-effect"  # a host effect that is not a counter, an append or a print
    NO_HOST_RNG_CALL = "no-host-rng-call"  # no numpy/random draw on the line to rewrite
    RACE_STREAMS_UNNAMED = "race-streams-unnamed"  # the earlier access is not in a `with torch.cuda.stream(s)` block of another stream


class PredictionCode(StrEnum):
    """The prediction's explanation and basis (``models.Prediction``); words in
    ``launchprof.render.words.prediction_text``."""

    NO_PROFILE = "no-profile"
    NO_KERNELS = "no-kernels"
    NO_EAGER_STEP = "no-eager-step"
    NO_COEFFICIENTS = "no-coefficients"
    REPLAY_ESTIMATE = "replay-estimate"  # the explanation of a prediction that has a speedup
    PROFILE_BASIS = "profile-basis"  # which profile and which measured inputs
    TRACE_BASIS = "trace-basis"  # the basis when the prediction named none
    NODE_TIMES_SCALED = "node-times-scaled"  # clock: the traced node times scaled to the bursts' span
    LAUNCH_COSTS_SCALED = "launch-costs-scaled"  # host: the profile's launch costs scaled to this host
    # The inputs came from the captured graph and the replays' CUDA events, not an eager trace:
    # nodes (the graph's kernel, copy and memset nodes)
    GRAPH_BASIS = "graph-basis"


@dataclass(frozen=True)
class Note:
    """One note of a report: what was found (``code``) and the figures it rests on."""

    code: str  # a NoteCode's value; a str, so a report from a newer launchprof still loads
    params: dict[str, Param] = field(default_factory=dict)
    # Whether the reader has something to do about it (or must know it to read the figures
    # shown by default); None when made is the code's rule (DESCRIPTIVE), so a report written
    # before this field reads as that rule says.
    actionable: bool | None = None

    def __post_init__(self) -> None:
        if self.actionable is None:
            object.__setattr__(self, "actionable", self.code not in DESCRIPTIVE)


def note(code: StrEnum, actionable: bool | None = None, **params: Param) -> Note:
    """A record of ``code`` (a NoteCode, or another record's code such as a PredictionCode);
    ``actionable`` overrides the code's rule (DESCRIPTIVE) for this one record."""
    return Note(code.value, params, actionable)


def text_note(text: str) -> Note:
    """Free text that has no code of its own (a note the worker wrote)."""
    return Note(NoteCode.TEXT.value, {"text": text})
