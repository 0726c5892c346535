"""Every verdict, from measurements only (README "Verdicts"): one run's and a multi-GPU run's.

Callers gather the facts (:class:`RunFacts`, :class:`RanksFacts`); the rules live here alone,
so a single run, the combined ranks and ``compare`` can never disagree on what a speedup
means. The rule, as the README states it:

- ``graphs-help``: the speedup's 95% interval starts at or above :data:`HELP_THRESHOLD` and
  the graph pays its set-up back within :data:`MAX_PAYBACK_REPLAYS` replays;
- ``marginal``: that fails, but the interval reaches 1.0 or above (no measurable loss);
- ``graphs-dont-help``: the whole interval lies below 1.0 (replay is clearly slower).

Before the timings: a failed capture is ``not-capturable``; a graph that captured but whose
replay differs from eager (a validation mismatch, or an error hazard that makes replays
wrong) is ``replay-invalid``, and its speedup holds only once that is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

from launchprof.enums import Verdict
from launchprof.model.step_timing import Speedup, Validation

HELP_THRESHOLD = 1.1  # the interval's low end a graph must reach
MAX_PAYBACK_REPLAYS = 10_000  # set-up won back within this many replays
# From the worst: a rank's own verdict, when the ranks disagree, decides the combined one.
VERDICT_ORDER = (
    Verdict.SCRIPT_FAILED, Verdict.NOT_CAPTURABLE, Verdict.REPLAY_INVALID, Verdict.GRAPHS_DONT_HELP,
    Verdict.MARGINAL, Verdict.EAGER_ONLY, Verdict.GRAPHS_HELP,
)
# The verdicts ``compare`` ranks, worst first: each is a measured graph (or its failure).
RANKED = (Verdict.NOT_CAPTURABLE, Verdict.REPLAY_INVALID, Verdict.GRAPHS_DONT_HELP, Verdict.MARGINAL, Verdict.GRAPHS_HELP)
# Error hazards that stop a capture: with one of them the graph captured only after
# launchprof changed the process (a kept autograd graph detached), so the code as written
# does not capture. Every other error hazard makes a captured graph's replays wrong.
CAPTURE_FAILURE_KINDS = frozenset({
    "capture-failed", "hidden-sync", "unjoined-stream", "kept-autograd-graph", "optimizer-not-capturable",
    "grad-scaler", "legacy-stream",
})  # fmt: skip


@dataclass(frozen=True)
class RunFacts:
    """What one run measured that bears on its verdict."""

    has_target: bool
    captured: bool | None  # None when the run never reached capture
    validation: Validation | None = None
    speedup: Speedup | None = None  # as the user's code would use it (with the clones it needs)
    # The eager step launched no GPU work and the graph holds none: capture records GPU work
    # only, so a replay would skip all of the step's CPU work.
    cpu_only_step: bool = False
    # The user's script ended the run (exception, exit, crash, timeout) and the run has a cause.
    script_failed: bool = False
    error_hazards: tuple[str, ...] = ()  # the kinds of the run's error-severity hazards
    payback_replays: float | None = None  # replays to win set-up back; None: never or unknown


@dataclass(frozen=True)
class RanksFacts:
    """What the ranks of one multi-GPU run reached, together."""

    rank_verdicts: tuple[Verdict, ...]  # of the ranks that left a report
    rank_failed: bool = False  # a rank died, was stopped, timed out, was interrupted or its script failed
    collective_error: bool = False  # an error-severity collective hazard between ranks
    all_reported: bool = True  # every rank left a report
    validation: Validation | None = None  # summed over the ranks
    speedup: Speedup | None = None  # the slowest rank's eager over the slowest rank's replay


def timing_verdict(speedup: Speedup, payback_replays: float | None = None) -> Verdict:
    """The timing rule alone: what a correct graph of this speed is worth. A payback that is
    unknown (an old report without set-up time) does not hold the verdict back."""
    pays_back = payback_replays is None or payback_replays <= MAX_PAYBACK_REPLAYS
    if speedup.low >= HELP_THRESHOLD and pays_back:
        return Verdict.GRAPHS_HELP
    if speedup.median >= 1.0 or speedup.high >= 1.0:  # slower only when the whole interval says so
        return Verdict.MARGINAL
    return Verdict.GRAPHS_DONT_HELP


def replay_wrong(validation: Validation | None, error_hazards: tuple[str, ...] = ()) -> bool:
    """The captured graph's replays differ from eager: seen by the validation, or said by an
    error hazard that is not a capture failure (a stream race, a frozen scalar that changed)."""
    if validation is not None and validation.matches < validation.calls_compared:
        return True
    return any(kind not in CAPTURE_FAILURE_KINDS for kind in error_hazards)


def _measured(facts: RunFacts) -> Verdict:
    if not facts.has_target or facts.captured is None:
        return Verdict.EAGER_ONLY
    if facts.captured is False:
        return Verdict.NOT_CAPTURABLE
    if replay_wrong(facts.validation, facts.error_hazards):
        return Verdict.REPLAY_INVALID
    if any(kind in CAPTURE_FAILURE_KINDS for kind in facts.error_hazards):
        return Verdict.NOT_CAPTURABLE  # captured only once launchprof fixed the process
    if facts.speedup is None:
        return Verdict.EAGER_ONLY
    return timing_verdict(facts.speedup, facts.payback_replays)


def decide(facts: RunFacts) -> Verdict:
    """One run's verdict."""
    verdict = _measured(facts)
    if facts.cpu_only_step:
        verdict = Verdict.GRAPHS_DONT_HELP
    if verdict is Verdict.EAGER_ONLY and facts.script_failed:
        return Verdict.SCRIPT_FAILED  # the script stopped before a verdict could be reached
    return verdict


def decide_ranks(facts: RanksFacts) -> Verdict:
    """The combined verdict: the worst a rank reached, or the combined figures' own when all agree.
    A collective error between ranks makes every replay wrong (a rank skips or reorders a
    collective the others wait for), unless a rank's own verdict is worse still."""
    if facts.rank_failed:
        return Verdict.SCRIPT_FAILED
    worst = min(set(facts.rank_verdicts), key=VERDICT_ORDER.index) if facts.rank_verdicts else Verdict.EAGER_ONLY
    if facts.collective_error:
        return min((worst, Verdict.REPLAY_INVALID), key=VERDICT_ORDER.index)
    if worst in (Verdict.NOT_CAPTURABLE, Verdict.REPLAY_INVALID, Verdict.EAGER_ONLY) or not facts.all_reported:
        return worst
    return _measured(RunFacts(True, True, facts.validation, facts.speedup))


def verdict_rank(verdict: str) -> int | None:
    """Where ``compare`` places a verdict, higher is better; None for one with no measured graph
    (eager-only, script-failed, static-only, or one this version does not know)."""
    try:
        return RANKED.index(Verdict(verdict))
    except ValueError:
        return None
