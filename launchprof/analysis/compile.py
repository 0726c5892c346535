"""``--compare compile``: the worker's ``compile`` events -> the report's ``compile`` and
``compile_no_cudagraphs`` fields, and the one line of advice between eager, hand capture and
torch.compile. Pure: returns data, never prints.

Step times come from the ``timing`` bursts of kind ``compile`` / ``compile-no-cudagraphs``,
timed exactly as eager and replay (same machinery, same sample count, same process), so the
three columns compare like with like.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from launchprof.analysis.compile_findings import break_findings, skip_findings
from launchprof.model.compiled import CompileFinding, CompileResult
from launchprof.events.compile_events import CompileEvent
from launchprof.run.evidence import Evidence
from launchprof.enums import Severity
from launchprof.model.hazard_records import Hazard
from launchprof.render.words.format import duration
from launchprof.model.step_timing import EagerProfile, ReplayProfile
from launchprof.model.core import Report
from launchprof.model.stats import stats_of

FIELDS = {"reduce-overhead": "compile", "default": "compile-no-cudagraphs"}
# Within this ratio two step times are "about the same".
SAME = 1.1


# How torch words "no more recompiles" in its unimplemented counters: 2.11's "Dynamo recompile
# limit exceeded"; earlier versions' "cache_size_limit reached" / "recompile_limit reached".
RECOMPILE_LIMIT = ("recompile limit", "recompile_limit", "cache_size_limit", "cache size limit")


def _relative(finding: CompileFinding, root: str | None) -> CompileFinding:
    """The user's file relative to the project root, as hazards name theirs."""
    if not finding.file or not root:
        return finding
    prefix = root.rstrip("/") + "/"
    if finding.file.startswith(prefix):
        return dataclasses.replace(finding, file=finding.file[len(prefix) :])
    return finding


def compile_result(event: CompileEvent, ev: Evidence, root: str | None = None) -> CompileResult:
    """One mode's result from its ``compile`` event and its bursts."""
    mode = str(event.mode or "reduce-overhead")
    kind = str(event.field or FIELDS.get(mode, mode))
    samples = list(ev.burst_wall_us.get(kind) or [])
    logs, counters = event.logs, event.counters
    skips = [_relative(f, root) for f in skip_findings(logs, counters, event.device)]
    breaks = [_relative(f, root) for f in break_findings(logs, counters)]
    recompiles = sum(1 for r in logs if "Recompiling function" in str(r.message or ""))
    shown = ("warmup_calls", "passes", "graph_launches", "device", "frames_in_timing")
    details: dict[str, Any] = {k: getattr(event, k) for k in shown if getattr(event, k) is not None}
    if any(limit in str(reason).lower() for reason in (counters.get("unimplemented") or {}) for limit in RECOMPILE_LIMIT):
        details["recompile_limit_hit"] = True  # dynamo stopped compiling a frame: calls its versions miss run uncompiled
    return CompileResult(
        mode=mode,
        status=str(event.status or "ok"),
        error=event.error,
        step_us=stats_of(samples),
        compile_s=event.compile_s,
        kernels_per_step=event.kernels_per_step,
        cudagraphs_used=event.cudagraphs_used,
        skip_reasons=skips,
        graph_breaks=breaks,
        cudagraph_skips=int((counters.get("inductor") or {}).get("cudagraph_skips") or 0),
        recompiles=recompiles,
        samples_us=samples,
        timing="burst" if samples else None,
        details=details,
    )


def _seconds(value: float) -> str:
    """Compile time as the advice says it: a sub-second compile is not "0 s"."""
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _median(stats: Any) -> float | None:
    value = getattr(stats, "median", None) if stats is not None else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def hazards_caught(result: CompileResult, hazards: Sequence[Hazard] = ()) -> list[Hazard]:
    """launchprof's own warnings and errors for hand capture that compile also named: what
    compile works around where hand capture would go wrong. A graph break or recompile (its
    guards) names a hazard of the same kind in the same file; a cudagraph skip only one of
    the same kind at the same line. A finding alone is not one: compile skipped
    graphs for an input mutated in place in a clean step, which hand capture replays
    correctly (stream_race_fixed.py); nor is a finding of another kind on a hazard's line."""
    guards = {(f.kind, f.file) for f in result.graph_breaks if f.kind and f.file}
    skips = {(f.kind, f.file, f.line) for f in result.skip_reasons if f.kind and f.file and f.line}
    return [h for h in hazards if Severity(h.severity).blocks and ((h.kind, h.file) in guards or (h.kind, h.file, h.line) in skips)]


def _versus_capture(ro: float | None, hand: float | None) -> str | None:
    if ro is None or hand is None:
        return None
    r = ro / hand
    if r >= SAME:
        return f"hand capture is {r:.1f}x faster than compile here"
    if r <= 1 / SAME:
        return f"compile is {1 / r:.1f}x faster than hand capture here"
    return "compile and hand capture are within 10% of each other here"


def _fusion_and_graphs(eager: EagerProfile | None, ro: CompileResult, plain: CompileResult | None) -> list[str]:
    parts = []
    eager_k = eager.kernels_per_step if eager else None
    # Fusion is read without graphs (mode="default"): reduce-overhead's count also holds the
    # copies its graphs add (decode_loop: 108 kernels, 125 with graphs).
    by_default = plain is not None and plain.ok
    fused_k = plain.kernels_per_step if by_default else ro.kernels_per_step
    which = "without graphs" if by_default else "reduce-overhead"
    if eager_k and fused_k is not None and fused_k != eager_k:
        parts.append(
            f"compile fuses {eager_k} kernels into {fused_k} ({which})" if fused_k < eager_k else f"compile runs {fused_k} kernels where eager runs {eager_k} ({which})"
        )
    ro_us, plain_us = _median(ro.step_us), _median(plain.step_us) if plain and plain.ok else None
    if ro.cudagraphs_used is False:
        parts.append(f"reduce-overhead ran without CUDA graphs ({_why_no_graphs(ro)})")
    elif ro_us is not None and plain_us is not None:
        saved = plain_us - ro_us
        parts.append(f"compile's graphs then save a further {duration(saved)} per call" if saved >= 0 else f"compile's graphs then cost {duration(-saved)} more per call")
    return parts


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _why_no_graphs(ro: CompileResult) -> str:
    """What torch said, in counts: its skip reasons, else the recompiles (a step that
    recompiles on every new value reaches dynamo's recompile limit and then runs uncompiled,
    with no skip message, only a "Dynamo recompile limit exceeded" counter: side_effects.py
    did, 8 recompiles)."""
    n = len(ro.skip_reasons)
    if n:
        return f"{_plural(n, 'distinct skip reason')} from torch"
    if ro.recompiles:
        limit = "; dynamo's recompile limit was hit: calls that miss its compiled versions run uncompiled" if ro.details.get("recompile_limit_hit") else ""
        return f"no skip reason from torch; it recompiled {_plural(ro.recompiles, 'time')}{limit}"
    return "no skip reason from torch"


def _payback(eager_us: float | None, ro: CompileResult) -> str | None:
    ro_us = _median(ro.step_us)
    if eager_us is None or ro_us is None or ro.compile_s is None:
        return None
    gain = eager_us - ro_us
    if gain <= 0:
        return f"compile is slower than eager per call: its {_seconds(ro.compile_s)} never pay back"
    return f"compile pays back its {_seconds(ro.compile_s)} after {math.ceil(ro.compile_s * 1e6 / gain):,} calls"


def _to_fix(hazards: Sequence[Hazard]) -> str | None:
    """"1 error and 2 warnings": the hazards hand capture must fix first (its infos need nothing)."""
    errors = sum(1 for h in hazards if Severity(h.severity) is Severity.ERROR)
    warnings = sum(1 for h in hazards if Severity(h.severity) is Severity.WARNING)
    named = [_plural(n, word) for n, word in ((errors, "error"), (warnings, "warning")) if n]
    return " and ".join(named) or None


def _choice(eager_us: float | None, hand_us: float | None, ro: CompileResult, plain: CompileResult | None, to_fix: str | None) -> str | None:
    """Which of the three to use, by measured step time: the fastest, or, among those within
    10% of it, the one with least to get wrong (eager, then torch.compile, which stays
    correct where it cannot capture, then hand capture). Hand capture counts only where its
    replay matched eager; its own warnings and errors are named."""
    compiled = [(r.mode, us) for r in (ro, plain) if r is not None and r.ok and (us := _median(r.step_us)) is not None]
    options: dict[str, float] = {}
    if eager_us is not None:
        options["stay eager"] = eager_us
    if compiled:
        mode, us = min(compiled, key=lambda m: m[1])
        options[f'use torch.compile (mode="{mode}")'] = us
    if hand_us is not None:
        fix = f", after fixing its {to_fix}" if to_fix else ""
        options[f"use hand capture{fix}"] = hand_us
    if len(options) < 2:
        return None
    best = min(options.values())
    close = [label for label, us in options.items() if us <= best * SAME]
    return close[0]  # insertion order is the preference order


def advice(
    eager: EagerProfile | None,
    replay: ReplayProfile | None,
    capture_valid: bool,
    ro: CompileResult | None,
    plain: CompileResult | None,
    hazards: Sequence[Hazard] = (),
    predicted: float | None = None,
) -> str | None:
    """One line: which of eager, hand capture and torch.compile to use here, and why
    (``hazards``: the report's own, for what compile caught; ``predicted``: the speedup
    predicted for hand capture, named where it could not be measured)."""
    if ro is None:
        return None
    hand_us = _median(replay.step_us) if replay and capture_valid else None
    if not ro.ok:
        rest = f"hand capture: {duration(hand_us)} per call" if hand_us else "eager is the comparison left"
        return f"torch.compile (reduce-overhead) {'timed out' if ro.status == 'timeout' else 'failed'} here; {rest}"
    choice = _choice(_median(eager.step_us) if eager else None, hand_us, ro, plain, _to_fix(hazards))
    parts = [p for p in (choice, _versus_capture(_median(ro.step_us), hand_us)) if p]
    if replay is not None and not capture_valid:
        parts.append("hand capture gives wrong results or failed here")
    if hand_us is None and predicted is not None and predicted >= SAME:
        parts.append(f"with its hazards fixed, hand capture is predicted {predicted:.1f}x faster than eager")
    caught = len(hazards_caught(ro, hazards))
    if caught:
        parts.append(f"compile is safer: it caught {_plural(caught, 'hazard')}")
    parts += _fusion_and_graphs(eager, ro, plain)
    payback = _payback(_median(eager.step_us) if eager else None, ro)
    if payback:
        parts.append(payback)
    spread = _spread(ro, plain)
    if spread:
        parts.append(spread)
    return "; ".join(parts) if parts else None


def _spread(ro: CompileResult | None, plain: CompileResult | None) -> str | None:
    """Said only where a mode's compiles disagreed by more than the noise of one (15%),
    in the table's names for the two columns."""
    ranges = []
    for result, column in ((ro, "torch.compile"), (plain, "no graphs")):
        rounds = result.rounds_us if result is not None and result.ok else []
        if len(rounds) >= 2 and max(rounds) > 1.15 * min(rounds):
            ranges.append(f"{duration(min(rounds))} to {duration(max(rounds))} ({column})")
    if not ranges:
        return None
    return f"compiled afresh, the step ran {' and '.join(ranges)} per call; the median compile is shown"


def over_rounds(events: Sequence[CompileEvent], ev: Evidence, root: str | None = None) -> CompileResult:
    """One mode over its compiles (``--compile-rounds``: dynamo reset each time, inductor's
    kernel caches kept): the round with the median step time (the slower middle one for an
    even count) stands for the mode; each ok round's figures go in ``rounds_us`` and
    ``rounds_compile_s``. Compiled objects of one small step can run 1.7x apart, so one
    round alone says which one it got, not how compile does.
    ``compile_s`` is the first round's: later rounds reuse the process's caches
    (two_streams_ok's reduce-overhead took 1.9 s, then 0.10 and 0.10 s), and what a user
    waits for is the first compile. A first round that failed or timed out is the mode's
    result, whatever the warm rounds after it did."""
    results = [compile_result(e, ev, root) for e in events]
    numbers = [e.round or i for i, e in enumerate(events, 1)]
    timed = [(n, r) for n, r in zip(numbers, results) if r.ok and _median(r.step_us) is not None]
    if len(results) == 1 or not results[0].ok or not timed:
        first = results[0]
        return first if len(results) == 1 else dataclasses.replace(first, details=dict(first.details, rounds=len(results)))
    number, chosen = sorted(timed, key=lambda nr: _median(nr[1].step_us) or 0.0)[len(timed) // 2]
    details = dict(chosen.details, round=number, rounds=len(results))
    if len(timed) < len(results):
        details["rounds_failed"] = len(results) - len(timed)
    return dataclasses.replace(
        chosen,
        compile_s=results[0].compile_s,
        details=details,
        rounds_us=[_median(r.step_us) or 0.0 for _, r in timed],
        rounds_compile_s=[float(r.compile_s or 0.0) for _, r in timed],
    )


def with_compile(report: Report, ev: Evidence, root: str | None) -> Report:
    """The report with its compile fields filled (unchanged when compile was not compared)."""
    events: dict[str, list[CompileEvent]] = {}
    for e in ev.compiles:
        events.setdefault(str(e.mode), []).append(e)
    if not events:
        return report
    ro = over_rounds(events["reduce-overhead"], ev, root) if "reduce-overhead" in events else None
    plain = over_rounds(events["default"], ev, root) if "default" in events else None
    valid = report.validation is not None and report.validation.matches == report.validation.calls_compared and report.verdict not in ("not-capturable", "replay-invalid")
    if ro is not None:
        ro = dataclasses.replace(ro, advice=advice(report.eager, report.replay, valid, ro, plain, report.hazards, report.predicted_speedup))
    return dataclasses.replace(report, compile=ro, compile_no_cudagraphs=plain)
