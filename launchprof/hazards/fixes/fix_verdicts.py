"""Each written fix with what its trial found: verified, failed, or not tried and why.

The worker tries the fixes it wrote itself from the same rules (worker/fix_trials.py) and
writes one ``fix-trial`` event per distinct fix; a fix is matched to its trial by file, first
line and text (model/fix_scope.fix_key), so the fix tried is the fix shown. A fix with no trial
says why: its scope (caller-side, numerics), or that this run did not try it. The one fix
verified without a trial is the kept autograd graph's: launchprof released that graph and
measured the step captured, so the figures are the fixed step's own.
"""

from __future__ import annotations

import dataclasses
import statistics

from launchprof.events.fix_events import FixTrialEvent
from launchprof.model.fix_scope import TrialReason, fix_key, scope_reason
from launchprof.model.hazard_records import Fix, FixVerification, Hazard
from launchprof.run.evidence import Evidence


def with_verification(hazards: list[Hazard], ev: Evidence) -> list[Hazard]:
    """``hazards`` with ``Fix.verified`` and ``Fix.verification`` set on every fix."""
    trials = {fix_key(t.file, t.line, t.after): t for t in ev.fix_trials}
    out = []
    for h in hazards:
        if h.fix is None:
            out.append(h)
            continue
        verified, record = verification_of(h, h.fix, trials, ev)
        out.append(dataclasses.replace(h, fix=dataclasses.replace(h.fix, verified=verified, verification=record)))
    return out


def verification_of(h: Hazard, fix: Fix, trials: dict[tuple[str, int, str], FixTrialEvent], ev: Evidence) -> tuple[bool | None, FixVerification]:
    if h.kind == "kept-autograd-graph" and fix.after and ev.kept_graph is not None and ev.kept_graph.captured:
        return measured_directly(ev)
    trial = trials.get(fix_key(fix.file, fix.line, fix.after))
    if trial is not None:
        return from_trial(trial)
    reason = scope_reason(fix)
    return None, FixVerification(reason_code=(reason or TrialReason.NOT_TRIED).value)


def from_trial(t: FixTrialEvent) -> tuple[bool | None, FixVerification]:
    record = FixVerification(
        captured=t.captured, calls_compared=t.calls_compared, matches=t.matches,
        replay_step_us=t.replay_step_us, speedup=t.speedup, reason_code="" if t.verified else t.reason,
    )  # fmt: skip
    return t.verified, record


def _median(samples: list[float]) -> float | None:
    return float(statistics.median(samples)) if samples else None


def measured_directly(ev: Evidence) -> tuple[bool | None, FixVerification]:
    """The kept-graph retry: the step captured with the graph released, and its validations
    and timings are the fixed step's."""
    calls = len(ev.validations)
    matches = sum(1 for v in ev.validations if v.match)
    replay = _median(ev.burst_wall_us.get("replay", [])) or _median(ev.replay_wall_us)
    eager = _median(ev.burst_wall_us.get("eager", [])) or _median(ev.eager_wall_us)
    speedup = eager / replay if eager and replay else None
    if not calls:
        return None, FixVerification(captured=True, replay_step_us=replay, speedup=speedup, reason_code=TrialReason.NO_CALLS.value)
    ok = matches == calls
    reason = "" if ok else TrialReason.REPLAY_DIFFERS.value
    return ok, FixVerification(captured=True, calls_compared=calls, matches=matches, replay_step_us=replay, speedup=speedup, reason_code=reason)
