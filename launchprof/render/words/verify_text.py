"""A written fix's trial in words: "verified: captures, matches eager on 4 calls, 3.10× faster",
"tried, failed: …", or "suggestion (not verified): …" (``Fix.verified``, ``Fix.verification``).

Every renderer words the three states here, so a fix reads the same in every format. A
fix that failed its trial is not shown as a fix: the renderers show it as tried and failed,
with the kind's general rule.
"""

from __future__ import annotations

from typing import Any

from launchprof.model.fix_scope import TrialReason
from launchprof.render.words.format import ratio

VERIFIED, FAILED, SUGGESTION = "verified", "failed", "suggestion"

_REASONS: dict[str, str] = {
    TrialReason.NOT_TRIED: "not tried in this run",
    TrialReason.CALLER_SIDE: "the change is in the caller's loop, which launchprof cannot recompile and try",
    TrialReason.NUMERICS: "it changes the step's results on purpose, so eager is no reference to check it against",
    TrialReason.NO_FIX: "no fix was written",
    TrialReason.NOT_IN_A_FUNCTION: "no function the step ran holds this line",
    TrialReason.CLOSURE: "the line is in a closure (or a method that calls super()), which cannot be recompiled alone",
    TrialReason.RANKS: "fixes are not tried under --nproc-per-node",
    TrialReason.BUDGET: "the time for trying fixes was spent on earlier ones",
    TrialReason.NO_GPU: "no GPU to try it on",
    TrialReason.NO_CALLS: "no recorded calls to try it on",
    TrialReason.DID_NOT_CAPTURE: "the fixed step still does not capture",
    TrialReason.REPLAY_DIFFERS: "the fixed step's replay differs from eager",
    TrialReason.NOT_COMPILED: "the fixed function does not compile",
    TrialReason.TRIAL_ERROR: "the fixed step raised an error",
}


def fix_state(fix: Any) -> str:
    """VERIFIED, FAILED or SUGGESTION for a written fix; "" for one that was not written."""
    if fix is None or not getattr(fix, "after", ""):
        return ""
    verified = getattr(fix, "verified", None)
    return VERIFIED if verified is True else FAILED if verified is False else SUGGESTION


def reason_text(code: str | None) -> str:
    return _REASONS.get(str(code or TrialReason.NOT_TRIED.value), str(code or ""))


def _failed(v: Any) -> str:
    code = str(getattr(v, "reason_code", "") or "")
    if code == TrialReason.REPLAY_DIFFERS and v.calls_compared:
        return f"{reason_text(code)} on {v.calls_compared - v.matches} of {v.calls_compared} calls"
    return reason_text(code or TrialReason.DID_NOT_CAPTURE.value)


def _verified(v: Any) -> str:
    text = f"captures, matches eager on {v.calls_compared} call{'' if v.calls_compared == 1 else 's'}"
    if v.speedup:
        text += f", {ratio(v.speedup)} faster" if v.speedup >= 1 else f", {ratio(v.speedup)} the eager speed (slower)"
    return text


def verification_text(fix: Any) -> str:
    """The trial in one line: "verified: …", "tried, failed: …" or "suggestion (not verified): …";
    "" for a fix that was not written."""
    state = fix_state(fix)
    v = getattr(fix, "verification", None)
    if state == VERIFIED and v is not None:
        return f"verified: {_verified(v)}"
    if state == FAILED and v is not None:
        return f"tried, failed: {_failed(v)}"
    if state:
        return f"suggestion (not verified): {reason_text(getattr(v, 'reason_code', None))}"
    return ""


def fix_heading(fix: Any) -> str:
    """The word a fix's diff is shown under: "fix", "suggested fix (not verified)", or, for a
    failed one, "tried, not a fix"."""
    return {VERIFIED: "fix", FAILED: "tried, not a fix", SUGGESTION: "suggested fix (not verified)"}.get(fix_state(fix), "fix")


def trial_line(fix: Any) -> str:
    """The line under a diff whose heading already says "suggested fix (not verified)": the
    reason alone ("not verified: …"); the whole verification text otherwise."""
    if fix_state(fix) == SUGGESTION:
        return f"not verified: {reason_text(getattr(getattr(fix, 'verification', None), 'reason_code', None))}"
    return verification_text(fix)
