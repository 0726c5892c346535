"""What a hazard found, as a record: a stable ``code`` and typed ``params``, never a sentence.

A hazard rule (launchprof.hazards, launchprof.lint.lint_rules) names what it found with one of
these codes and the figures and names it rests on; ``launchprof.render.words.hazard_text`` turns
the record into the hazard's ``message`` and ``hint``, with every number written by the one
formatter. The kind (``hidden-sync``, ...) says which family a hazard belongs to; the code
says which of the family's findings it is, so one kind has several codes.

A few params are added after a rule ran, by what places the hazard in a wider view; their
keys are :class:`Placed`'s. A hazard read from a report written before hazards had codes
has the code ``text`` and its stored message as ``{"text": message}``.

Plain enums, no imports: lint's worker processes build findings with them.
"""

from __future__ import annotations

from enum import StrEnum


class HazardCode(StrEnum):
    """Every hazard code launchprof writes. Codes are a contract: add, never rename."""

    TEXT = "text"  # the stored message of a hazard without a code: params {"text": ...}
    # --- runtime rules (launchprof.hazards) ---
    SYNC = "sync"
    PAGEABLE_COPY = "pageable-copy"
    CAPTURE_FAILED = "capture-failed"
    KEPT_AUTOGRAD_GRAPH = "kept-autograd-graph"
    OPTIMIZER_NOT_CAPTURABLE = "optimizer-not-capturable"
    GRAD_SCALER = "grad-scaler"
    LEGACY_STREAM = "legacy-stream"
    UNJOINED_FORK = "unjoined-fork"
    FROZEN_SCALAR = "frozen-scalar"
    REALLOCATED_ARGUMENTS = "reallocated-arguments"
    REBOUND_STATE = "rebound-state"
    MUTATED_ARGUMENT = "mutated-argument"
    DYNAMIC_SHAPE = "dynamic-shape"
    KERNEL_SEQUENCE_DIFFERS = "kernel-sequence-differs"
    OP_SEQUENCE_DIFFERS = "op-sequence-differs"  # no eager trace: the calls' aten op sequences differ
    FOREIGN_RNG = "foreign-rng"
    HOST_SIDE_EFFECT = "host-side-effect"
    REPLAY_MISMATCH = "replay-mismatch"
    STREAM_RACE = "stream-race"
    KEPT_OUTPUT = "kept-output"
    LOOP_BACK = "loop-back"
    UNCAPTURED_COLLECTIVE = "uncaptured-collective"
    COLLECTIVE_DIVERGENCE = "collective-divergence"
    # --- static rules (launchprof.lint) ---
    LINT_SYNC_CALL = "lint-sync-call"
    LINT_SYNC_CONDITION = "lint-sync-condition"
    LINT_SYNC_FORMAT = "lint-sync-format"
    LINT_SYNC_MASK = "lint-sync-mask"
    LINT_PAGEABLE_HOST_TENSOR = "lint-pageable-host-tensor"
    LINT_PAGEABLE_COPY_FROM_HOST = "lint-pageable-copy-from-host"
    LINT_PAGEABLE_NEW_TENSOR = "lint-pageable-new-tensor"
    LINT_PAGEABLE_FROM_DATA = "lint-pageable-from-data"
    LINT_FROZEN_COUNTER = "lint-frozen-counter"
    LINT_FROZEN_NUMBER = "lint-frozen-number"
    LINT_FROZEN_OPTIMIZER_SETTING = "lint-frozen-optimizer-setting"
    LINT_FROZEN_BRANCH = "lint-frozen-branch"
    LINT_ARGUMENT_DECIDES = "lint-argument-decides"
    LINT_STREAM_NOT_JOINED = "lint-stream-not-joined"
    LINT_HOST_RNG = "lint-host-rng"
    LINT_NEW_GENERATOR = "lint-new-generator"
    LINT_PASSED_GENERATOR = "lint-passed-generator"
    LINT_CALL_NOT_FOLLOWED = "lint-call-not-followed"


class SyncReason(StrEnum):
    """Why a call lint found waits for the GPU (``lint-sync-call``'s ``reason``)."""

    WAITS = "waits"  # .item(), .tolist(), .nonzero() ...
    TO_HOST = "to-host"  # .cpu(), .to("cpu")
    HOST_RESULT = "host-result"  # masked_select, unique, equal, allclose
    SYNCHRONIZE = "synchronize"
    QUERY = "query"
    LOGS_TENSOR = "logs-tensor"
    FORMATS_TENSOR = "formats-tensor"
    PRINTS_TENSOR = "prints-tensor"
    SIZE_ON_HOST = "size-on-host"
    CONVERTS = "converts"  # bool(t), int(t): params "to" names the type


class Placed:
    """Keys of the params added to a hazard after its rule ran."""

    OUTSIDE_USER_CODE = "outside_user_code"  # True: no frame of the user's code (with library_file/line when known)
    LIBRARY_FILE = "library_file"
    LIBRARY_LINE = "library_line"
    WHOLE_SCRIPT = "whole_script"  # True: found with no target, where nothing is captured
    ON_RANKS = "on_ranks"  # the ranks a multi-GPU run found it on
    CALL_CHAIN = "call_chain"  # lint: the calls from the target that reach the line
    DRIVER = "driver"  # lint: host driver code; the function it runs from ("" for the main block)
    DRIVER_FUNCTION = "driver_function"  # lint: the function the finding is in
