"""The headline's figures and sentences, for every format: the replay step first (the figure
that holds from run to run), then the speedup with its interval, as the user's code would
get it where it needs output clones, then what the verdict rests on: the replay that
differs from eager, why a gain is not clear, the bucket plan of a step whose shapes vary.

How each figure is computed (the bootstrap, the bursts) is said in the figure table, not
here. The thresholds are the verdict rule's own (launchprof.analysis.verdict), imported where
a sentence needs them: ``lint`` and the start of ``analyze`` import no analysis module.
"""

from __future__ import annotations

from typing import Any

from launchprof.enums import Severity, Verdict
from launchprof.render.paths import location, relative, report_root, sorted_hazards
from launchprof.render.words import format as fmt
from launchprof.render.words.training_text import once_fixed

AS_USED = "as your code uses it, with the output clone it needs"


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _verdict(report: Any) -> Verdict | None:
    try:
        return Verdict(report.verdict)
    except ValueError:
        return None


def headline_speedup(report: Any) -> Any:
    """The speedup the headline and the verdict read: as used (with the needed output clones)
    when the report has that figure, else eager over copy-in + replay."""
    return _get(report, "speedup_as_used") or report.speedup


def headline_gain_unmeasurable(report: Any) -> bool:
    """The headline speedup's 95% interval includes 1.0 (the rule of
    launchprof.model.step_timing.no_measurable_gain, on the headline's figure)."""
    sp = headline_speedup(report)
    return sp is not None and sp.low <= 1.0 <= sp.high


def step_line(report: Any) -> str | None:
    """"replay 462.0 µs per step (eager 1.86 ms)": the stable figure, first."""
    replay = _get(_get(report, "replay"), "step_us")
    if replay is None:
        return None
    eager = _get(_get(report, "eager"), "step_us")
    text = f"replay {fmt.duration(replay.median)} per step"
    text += f" (eager {fmt.duration(eager.median)})" if eager is not None else ""
    return text + once_fixed(report, "replay")


def speedup_line(report: Any) -> str | None:
    """The speedup with its interval and no method; "once fixed" when the replay is wrong now."""
    sp = report.speedup
    if sp is None:
        return None
    head = "speedup once fixed" if _verdict(report) is Verdict.REPLAY_INVALID else "speedup"
    used = _get(report, "speedup_as_used")
    if used is not None:
        text = f"{head} {fmt.speedup(used.median, used.low, used.high)} {AS_USED} ({fmt.ratio(sp.median)} without it)"
    else:
        text = f"{head} {fmt.speedup(sp.median, sp.low, sp.high)}"
    return text + once_fixed(report, "speedup")


def _ratio_with_interval(report: Any) -> str:
    """"2.61× as fast (95% interval 2.57–2.65×)", as used where the report has that figure."""
    sp = headline_speedup(report)
    text = f"{fmt.ratio(sp.median)} as fast"
    if sp.low is not None and sp.high is not None:
        text += f" (95% interval {fmt.interval(sp.low, sp.high)})"
    return text + (f", {AS_USED}" if _get(report, "speedup_as_used") is not None else "")


def measured_clause(report: Any) -> str:
    """"replay 57.4 µs per step against eager 149.8 µs, 2.61× as fast (95% interval …)"."""
    replay = _get(_get(report, "replay"), "step_us")
    eager = _get(_get(report, "eager"), "step_us")
    parts = []
    if replay is not None:
        against = f" against eager {fmt.duration(eager.median)}" if eager is not None else ""
        parts.append(f"replay {fmt.duration(replay.median)} per step{against}")
    if headline_speedup(report) is not None:
        parts.append(_ratio_with_interval(report))
    return ", ".join(parts) or "no speedup was measured"


def invalid_reason(report: Any) -> str:
    """Why a captured graph's replay is wrong: the validation's count, or the error hazards."""
    val = report.validation
    if val is not None and val.matches < val.calls_compared:
        diff = f", max |diff| {fmt.diff(val.max_abs_diff)}" if val.max_abs_diff is not None else ""
        return f"{val.calls_compared - val.matches} of {val.calls_compared} compared calls differ{diff}"
    from launchprof.analysis.verdict import CAPTURE_FAILURE_KINDS

    root = report_root(report)
    wrong = [h for h in sorted_hazards(report.hazards) if h.severity == Severity.ERROR and h.kind not in CAPTURE_FAILURE_KINDS]
    named = [f"{h.kind} at {location(h, root)}" if location(h, root) else h.kind for h in wrong[:2]]
    more = f" and {len(wrong) - 2} more" if len(wrong) > 2 else ""
    return f"{', '.join(named)}{more} makes every replay wrong" if named else "an error hazard makes every replay wrong"


def invalid_line(report: Any) -> str | None:
    """replay-invalid: what is wrong, and that every figure waits for the fix."""
    if _verdict(report) is not Verdict.REPLAY_INVALID:
        return None
    return f"{invalid_reason(report)}: fix the error hazards below first"


def marginal_reason(report: Any) -> str | None:
    """Why a faster replay is still no clear gain: the interval, or the payback."""
    sp = headline_speedup(report)
    if _verdict(report) is not Verdict.MARGINAL or sp is None:
        return None
    from launchprof.analysis.verdict import HELP_THRESHOLD, MAX_PAYBACK_REPLAYS

    reasons = []
    if sp.low < HELP_THRESHOLD:
        reasons.append(f"the interval's low end, {fmt.ratio(sp.low)}, is under the {fmt.ratio(HELP_THRESHOLD)} a clear gain needs")
    pay = _get(report, "breakeven_replays_as_used") if _get(report, "speedup_as_used") is not None else report.breakeven_replays
    if pay is not None and pay > MAX_PAYBACK_REPLAYS:
        reasons.append(f"set-up pays back only after {fmt.replays(pay)} replays (more than {MAX_PAYBACK_REPLAYS:,})")
    return "; ".join(reasons) or None


def unsafe_padding(report: Any) -> bool:
    plan = _get(report, "buckets")
    return plan is not None and _get(plan, "padding_safe") is False


def padding_first(report: Any) -> str | None:
    """What must be written before padded calls may share the bucket graphs."""
    if not unsafe_padding(report):
        return None
    plan = report.buckets
    leaks = [leak for leak in plan.leaks if leak.op]
    if not leaks:
        return "padding is NOT safe: padded rows change the real rows' results; make the reduction ignore them first"
    leak, root = leaks[0], report_root(report)
    where = f"{relative(leak.file, root)}:{leak.line}" if leak.file and leak.line else None
    code = (leak.code or "").split("#")[0].strip()
    at = ", ".join(x for x in (where, f"`{code}`" if code else None) if x)
    return f"padding is NOT safe: write a masked {leak.op} first" + (f" ({at})" if at else "")


def plan_line(report: Any) -> str | None:
    """"one graph serves 1 of 7 shapes; the bucket plan: 5 graphs (sizes …) serve 75 of 75 calls …"."""
    plan = _get(report, "buckets")
    if plan is None:
        return None
    observed = dict(plan.observed or {})
    calls = sum(observed.values())
    graphs = len(plan.recommended)
    head = f"one graph serves 1 of {len(observed)} shapes" if observed else "one graph serves one shape"
    text = f"{head}; the bucket plan: {graphs} graph{'s' if graphs != 1 else ''} (sizes {', '.join(map(str, plan.recommended))})"
    if calls:
        served = calls - (plan.eager_calls or 0)
        text += f" serve {served:,} of {calls:,} calls ({fmt.percent(served / calls, 0)})"
    if plan.speedup is not None:
        s = plan.speedup
        text += f", {fmt.speedup(s.median, s.low, s.high)} through the plan"
    elif not plan.measured:
        text += " (not measured)"
    return text


def plan_lines(report: Any) -> list[str]:
    return [line for line in (plan_line(report), padding_first(report)) if line]


def verified_fix_line(report: Any) -> str | None:
    """On a step that does not capture or replays wrong: what the best verified fix measured on
    the user's own calls ("with the fix at peak.py:11 alone: captures, 1.67× measured")."""
    if _verdict(report) not in (Verdict.NOT_CAPTURABLE, Verdict.REPLAY_INVALID):
        return None
    tried = [
        (h, h.fix.verification) for h in _get(report, "hazards") or []
        if h.fix is not None and h.fix.verified and h.fix.verification is not None and h.fix.verification.speedup
    ]
    if not tried:
        return None
    h, v = max(tried, key=lambda pair: pair[1].speedup)
    where = f"{(h.fix.file or h.file or '').rsplit('/', 1)[-1]}:{h.fix.line or h.line}"
    replay = f", replay {fmt.duration(v.replay_step_us)}" if v.replay_step_us else ""
    return f"with the verified fix at {where} alone: captures, matches eager, {fmt.ratio(v.speedup)} measured on your calls{replay}"

