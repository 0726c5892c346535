"""Which written fixes the worker can try on the user's calls, and the reasons one was not
tried or failed (``FixVerification.reason_code``).

A fix is tried by recompiling the function that holds its line (worker/fix_trials.py). A fix
whose change lives in the caller's loop cannot be recompiled that way: the caller's frame is
running. A fix that changes what the step computes (a padded mask, another random stream)
cannot be checked against eager: it is meant to differ. Both stay suggestions, with the reason.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from launchprof.model.findings import FixCode

# Fixes whose change is (partly) in the caller: a tensor the caller makes, a value read after
# the replay, a line moved out of the step, a constructor outside it.
CALLER_SIDE: frozenset[str] = frozenset(
    c.value
    for c in (
        FixCode.SCALAR_TENSOR,
        FixCode.DETACH_RETURN,
        FixCode.DROP_KEPT_GRAPH,
        FixCode.DEVICE_COUNTER,
        FixCode.MOVED_TO_CALLER,
        FixCode.MOVED_TOGETHER,
        FixCode.CLONE_KEPT,
        FixCode.MUTATED_ARGUMENT,
        FixCode.PINNED_COPY,
        FixCode.SYNC_OUTSIDE,
        FixCode.PRINT_OUTSIDE,
        FixCode.TO_HOST_AFTER_REPLAY,
        FixCode.REBIND_IN_PLACE,
        FixCode.CAPTURABLE_OPTIMIZER,
        FixCode.GRAD_SCALER_OPTIONS,
    )
)
# Fixes that change the step's results on purpose: eager is no reference for them.
CHANGES_NUMERICS: frozenset[str] = frozenset(
    c.value for c in (FixCode.NONZERO_MASK, FixCode.MASK_READ, FixCode.MASK_LATER_USE, FixCode.CUDA_RNG)
)
# A line of a fix's ``after`` that says the change belongs to the caller.
CALLER_MARK = "# in the caller"


class TrialReason(StrEnum):
    """Why a fix was not tried (verified None) or why the try failed (verified False)."""

    NONE = ""  # verified
    NOT_TRIED = "not-tried"  # the run has no trial of it (recorded before trials, or a fix the analysis wrote later)
    CALLER_SIDE = "caller-side"
    NUMERICS = "numerics"
    NO_FIX = "no-fix"  # launchprof could not write the fix
    NOT_IN_A_FUNCTION = "not-in-a-function"  # no function the step ran holds the line
    CLOSURE = "closure"  # the function has free variables (a closure, ``super()``)
    RANKS = "ranks"  # not tried under --nproc-per-node
    BUDGET = "budget"  # the trial time was spent
    NO_GPU = "no-gpu"
    NO_CALLS = "no-calls"  # no recorded argument sets to try it on
    DID_NOT_CAPTURE = "did-not-capture"
    REPLAY_DIFFERS = "replay-differs"
    NOT_COMPILED = "not-compiled"  # the patched function did not compile
    TRIAL_ERROR = "trial-error"  # the patched function raised, eagerly


def scope_reason(fix: Any) -> TrialReason:
    """Why ``fix`` cannot be tried by recompiling its function; NONE when it can."""
    after = str(getattr(fix, "after", "") or "")
    if not after.strip():
        return TrialReason.NO_FIX
    code = str(getattr(fix, "code", "") or "")
    if code in CALLER_SIDE or any(line.strip().startswith(CALLER_MARK) or CALLER_MARK in line for line in after.splitlines()):
        return TrialReason.CALLER_SIDE
    if code in CHANGES_NUMERICS:
        return TrialReason.NUMERICS
    return TrialReason.NONE


def fix_key(file: str | None, line: int | None, after: str) -> tuple[str, int, str]:
    """One fix's identity across the worker and the analysis: its file, first line and text."""
    return (str(file or ""), int(line or 0), after)
