"""Per-rank reports -> the combined report. Returns data; never prints.

The ranks of a tensor-parallel step wait for each other in every collective, so the step
takes as long as its slowest rank: the combined eager and replay figures are those of the
slowest rank on each side, and the combined speedup is their ratio. The verdict is the
worst a rank reached (a rank that failed or could not be captured decides it), and a
collective hazard between ranks makes the step not capturable as a whole. Every hazard
keeps the ranks it was found on; a rank that died keeps its exit and its last events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from launchprof.analysis.notes import with_notes
from launchprof.enums import Severity, Verdict, hazard_order, severity_rank
from launchprof.run.evidence import parse_events
from launchprof.model.findings import NoteCode, note
from launchprof.model.hazard_codes import Placed
from launchprof.hazards.collectives import collective_divergence, collectives_per_call, first_call, uncaptured_collectives
from launchprof.hazards.common import restated, target_site
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report, RunInfo
from launchprof.model.step_timing import Speedup, Validation
from launchprof.model.rank_records import RankSkew, RankSummary
from launchprof.run.file import Run
from launchprof.model.stats import speedup_of
from launchprof.common.trace_tables import gpu_table
from launchprof.analysis.verdict import RanksFacts, decide_ranks

# A rank whose median step is this much above the median rank's is a straggler.
STRAGGLER_SPREAD = 0.10
# Events shown for a rank that did not finish.
LAST_EVENTS = 3
COLLECTIVE_KINDS = ("uncaptured-collective", "collective-divergence")


@dataclass(frozen=True)
class RankInput:
    """What the CLI knows of one rank after the run."""

    rank: int
    report: Report | None
    run: Run | None = None  # its run file, loaded: events and traces
    exit_code: int | None = None
    signal: str | None = None
    stopped: str | None = None  # who stopped it, when it did not end by itself
    timed_out: bool = False
    interrupted: bool = False
    output_tail: list[str] = field(default_factory=list)
    run_file: str | None = None


def _events(inp: RankInput) -> list[dict[str, Any]]:
    return list(inp.run.events) if inp.run is not None else []


def _event_line(e: dict[str, Any]) -> str:
    """One event as a short line: its type, time and the fields that say most."""
    keys = ("name", "phase", "kind", "status", "problem", "reason", "text")
    what = ", ".join(f"{k} {str(e[k])[:80]}" for k in keys if e.get(k) not in (None, ""))
    t = e.get("t")
    when = f" at {t:.2f} s" if isinstance(t, (int, float)) else ""
    return f"{e.get('type')}{when}" + (f": {what}" if what else "")


def rank_status(inp: RankInput) -> tuple[str, str | None]:
    """(status, cause): who or what ended this rank, in one line."""
    events = _events(inp)
    ev = parse_events(events)
    run = inp.report.run if inp.report is not None else None
    if ev.environment_problem:
        return "environment", ev.environment_problem
    if ev.target_problem:
        return "target-problem", ev.target_problem
    if inp.stopped:
        return "stopped", inp.stopped
    if inp.timed_out or inp.interrupted:
        return ("timed-out" if inp.timed_out else "interrupted"), run.cause if run else None
    if ev.worker_end is None:
        how = inp.signal or (f"exit status {inp.exit_code}" if inp.exit_code is not None else "no exit status known")
        last = f"; its last event: {_event_line(events[-1])}" if events else "; it wrote no event"
        return "died", f"the rank's worker died ({how}) without finishing{last}"
    if inp.report is not None and inp.report.verdict == Verdict.SCRIPT_FAILED or (run and run.cause and ev.script_end and ev.script_end.status in ("exception", "exit")):
        return "script-failed", run.cause if run else None
    return "ok", run.cause if run else None


def _collectives(inp: RankInput) -> tuple[int | None, int | None, pd.DataFrame | None, pd.DataFrame | None]:
    """Collective kernels per eager step and per replay, with the GPU tables they come from."""
    if inp.run is None:
        return None, None, None, None
    eager_trace, replay_trace = inp.run.trace("eager"), inp.run.trace("replay")
    eager = gpu_table(eager_trace) if eager_trace else None
    replay = gpu_table(replay_trace) if replay_trace else None
    return (
        collectives_per_call(eager) if eager is not None else None,
        collectives_per_call(replay) if replay is not None else None,
        eager,
        replay,
    )


def summary(inp: RankInput, collectives: tuple[int | None, int | None]) -> RankSummary:
    status, cause = rank_status(inp)
    r = inp.report
    eager, replay = (r.eager, r.replay) if r is not None else (None, None)
    failed = status != "ok"
    return RankSummary(
        rank=inp.rank,
        status=status,
        cause=cause,
        exit_code=inp.exit_code,
        signal=inp.signal,
        verdict=str(r.verdict) if r is not None else None,
        eager_step_us=eager.step_us.median if eager and eager.step_us else None,
        replay_step_us=replay.step_us.median if replay and replay.step_us else None,
        speedup=r.speedup.median if r is not None and r.speedup else None,
        kernels_per_step=eager.kernels_per_step if eager else None,
        graph_nodes=replay.graph_nodes if replay else None,
        collectives_per_step=collectives[0],
        collectives_captured=collectives[1],
        pool_bytes=replay.pool_bytes if replay else None,
        workspace_bytes=replay.workspace_bytes if replay else None,
        hazards=len(r.hazards) if r is not None else 0,
        run_file=inp.run_file,
        last_events=[_event_line(e) for e in _events(inp)[-LAST_EVENTS:]] if failed else [],
        output_tail=list(inp.output_tail) if failed else [],
    )


def rank_skew(medians: dict[int, float | None], side: str) -> RankSkew | None:
    """Slowest against fastest rank, and the stragglers, for one side's step medians."""
    s = pd.Series({r: m for r, m in medians.items() if m is not None and m > 0}, dtype=float)
    if len(s) < 2:
        return None
    mid = float(s.median())
    return RankSkew(
        side=side,
        slowest_rank=int(s.idxmax()),
        fastest_rank=int(s.idxmin()),
        slowest_us=float(s.max()),
        fastest_us=float(s.min()),
        spread=float((s.max() - s.min()) / s.min()),
        stragglers=[int(r) for r in s.index[s > mid * (1 + STRAGGLER_SPREAD)]],
    )


def tagged_hazards(inputs: list[RankInput]) -> list[Hazard]:
    """Every rank's hazards, one entry per finding, its message led by the ranks it was found on."""
    found: dict[tuple[Any, ...], tuple[Hazard, list[int]]] = {}
    for inp in inputs:
        for h in inp.report.hazards if inp.report is not None else []:
            key = (h.kind, h.file, h.line, h.details.get("argument") or h.details.get("variable"), h.fingerprint)
            kept, ranks = found.get(key, (h, []))
            if severity_rank(h.severity) < severity_rank(kept.severity):
                kept = h
            found[key] = (kept, [*ranks, inp.rank])
    out = []
    for h, ranks in found.values():
        out.append(dataclasses.replace(restated(h, {Placed.ON_RANKS: list(ranks)}), details={**h.details, "ranks": ranks}))
    return out


def collective_hazards(inputs: list[RankInput], tables: dict[int, tuple[Any, Any]]) -> list[Hazard]:
    """uncaptured-collective on each rank, collective-divergence between ranks."""
    out: list[Hazard] = []
    sequences: dict[int, list[str]] = {}
    site = None
    for inp in inputs:
        eager, replay = tables.get(inp.rank, (None, None))
        ev = parse_events(_events(inp))
        rank_site = target_site(ev.target)
        site = site or rank_site
        if eager is None:
            continue
        sequences[inp.rank] = first_call(eager)["name"].tolist()
        if replay is not None:
            out += uncaptured_collectives(eager, replay, rank_site, inp.rank)
    return out + collective_divergence(sequences, site)


def _slowest(inputs: list[RankInput], side: str) -> Report | None:
    """The report of the rank whose ``side`` (eager or replay) step median is the largest."""
    timed = [(getattr(i.report, side).step_us.median, i.rank, i.report) for i in inputs if i.report is not None and getattr(i.report, side) and getattr(i.report, side).step_us]
    return max(timed, key=lambda t: (t[0], -t[1]))[2] if timed else None


def _measured(inputs: list[RankInput], summaries: list[RankSummary]) -> list[RankInput]:
    """The ranks whose figures set the combined ones: those that ended well (a rank that died
    mid-way has partial, differently timed figures), else every rank."""
    ok = {s.rank for s in summaries if s.status == "ok"}
    return [i for i in inputs if i.rank in ok] or inputs


def combined_speedup(eager: Report | None, replay: Report | None) -> Speedup | None:
    if eager is None or replay is None or eager.eager is None or replay.replay is None or eager.eager.timing != replay.replay.timing:
        return None
    result = speedup_of(eager.eager.samples_us, replay.replay.samples_us)
    if result is None:
        return None
    method = "ratio of the slowest rank's eager and replay step medians (each rank timed in step with the others); 95% bootstrap interval"
    return Speedup(median=result.median, low=result.low, high=result.high, method=method)


def combined_validation(reports: list[Report]) -> Validation | None:
    vals = [r.validation for r in reports if r.validation is not None]
    if not vals:
        return None
    diffs = [v.max_abs_diff for v in vals if v.max_abs_diff is not None]
    return Validation(sum(v.calls_compared for v in vals), sum(v.matches for v in vals), max(diffs) if diffs else None)


def combined_verdict(reports: list[Report], summaries: list[RankSummary], hazards: list[Hazard], ratio: Speedup | None, validation: Validation | None) -> Verdict:
    return decide_ranks(RanksFacts(
        rank_verdicts=tuple(Verdict(r.verdict) for r in reports),
        rank_failed=any(s.status in ("died", "stopped", "script-failed", "timed-out", "interrupted") for s in summaries),
        collective_error=any(h.kind in COLLECTIVE_KINDS and h.severity == Severity.ERROR for h in hazards),
        all_reported=len(reports) >= len(summaries),
        validation=validation,
        speedup=ratio,
    ))


def combined_run(summaries: list[RankSummary], reports: list[Report]) -> RunInfo:
    causes = [f"rank {s.rank}: {s.cause}" for s in summaries if s.cause]
    runs = [r.run for r in reports if r.run is not None]
    stops = {r.stopped_after_calls for r in runs}  # the ranks stop at the same call (worker/early_stop.py)
    return RunInfo(
        complete=all(s.status == "ok" for s in summaries) and all(r.complete for r in runs),
        cause="; ".join(causes) or None,
        script_exit=next((r.script_exit for r in runs if r.script_exit), None),
        target_calls=min((r.target_calls for r in runs), default=0),
        wall_s=max((r.wall_s for r in runs if r.wall_s is not None), default=None),
        stopped_after_calls=stops.pop() if len(stops) == 1 else None,
    )


def combine(inputs: list[RankInput]) -> Report:
    """The combined report of one multi-GPU run; ``inputs`` holds every rank, in rank order."""
    reports = [i.report for i in inputs if i.report is not None]
    if not reports:
        raise ValueError("no rank left a report to combine")
    found = {i.rank: _collectives(i) for i in inputs}
    summaries = [summary(i, found[i.rank][:2]) for i in inputs]
    hazards = tagged_hazards(inputs) + collective_hazards(inputs, {r: c[2:] for r, c in found.items()})
    hazards.sort(key=hazard_order)
    measured = _measured(inputs, summaries)
    slow_eager, slow_replay = _slowest(measured, "eager"), _slowest(measured, "replay")
    base = slow_replay or slow_eager or reports[0]
    ratio = combined_speedup(slow_eager, slow_replay)
    validation = combined_validation(reports)
    skew = [s for s in (rank_skew({x.rank: x.eager_step_us for x in summaries}, "eager"), rank_skew({x.rank: x.replay_step_us for x in summaries}, "replay")) if s]
    if slow_eager is not None or slow_replay is not None:
        eager_rank, replay_rank = (_rank_of(inputs, rep) if rep is not None else None for rep in (slow_eager, slow_replay))
        slowest = note(NoteCode.SLOWEST_RANK, eager_rank=eager_rank, replay_rank=replay_rank, finished=len(measured), ranks=len(inputs))
        base = with_notes(base, [slowest], first=True)
    return dataclasses.replace(
        base,
        verdict=combined_verdict(reports, summaries, hazards, ratio, validation),
        eager=slow_eager.eager if slow_eager is not None else base.eager,
        replay=slow_replay.replay if slow_replay is not None else base.replay,
        speedup=ratio,
        breakeven_replays=base.breakeven_replays if ratio is not None else None,
        validation=validation,
        hazards=hazards,
        run=combined_run(summaries, reports),
        run_file=None,
        capture_snippet=None,
        ranks=summaries,
        rank_skew=skew or None,
    )


def _rank_of(inputs: list[RankInput], report: Report) -> int:
    return next(i.rank for i in inputs if i.report is report)
