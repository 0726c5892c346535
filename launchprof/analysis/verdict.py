"""Every verdict, from measurements only (README "Verdicts"): one run's and a multi-GPU run's.

Callers gather the facts (:class:`RunFacts`, :class:`RanksFacts`); the rules live here alone,
so a single run and the combined ranks can never disagree on what a speedup means.
"""

from __future__ import annotations

from dataclasses import dataclass

from launchprof.enums import Verdict
from launchprof.model.step_timing import Speedup, Validation

HELP_THRESHOLD = 1.1
# From the worst: a rank's own verdict, when the ranks disagree, decides the combined one.
VERDICT_ORDER = (Verdict.SCRIPT_FAILED, Verdict.NOT_CAPTURABLE, Verdict.GRAPHS_DONT_HELP, Verdict.MARGINAL, Verdict.EAGER_ONLY, Verdict.GRAPHS_HELP)


@dataclass(frozen=True)
class RunFacts:
    """What one run measured that bears on its verdict."""

    has_target: bool
    captured: bool | None  # None when the run never reached capture
    validation: Validation | None = None
    speedup: Speedup | None = None
    # The eager step launched no GPU work and the graph holds none: capture records GPU work
    # only, so a replay would skip all of the step's CPU work.
    cpu_only_step: bool = False
    # The user's script ended the run (exception, exit, crash, timeout) and the run has a cause.
    script_failed: bool = False


@dataclass(frozen=True)
class RanksFacts:
    """What the ranks of one multi-GPU run reached, together."""

    rank_verdicts: tuple[Verdict, ...]  # of the ranks that left a report
    rank_failed: bool = False  # a rank died, was stopped, timed out, was interrupted or its script failed
    collective_error: bool = False  # an error-severity collective hazard between ranks
    all_reported: bool = True  # every rank left a report
    validation: Validation | None = None  # summed over the ranks
    speedup: Speedup | None = None  # the slowest rank's eager over the slowest rank's replay


def _measured(captured: bool | None, has_target: bool, validation: Validation | None, speedup: Speedup | None) -> Verdict:
    if not has_target or captured is None:
        return Verdict.EAGER_ONLY
    if captured is False:
        return Verdict.NOT_CAPTURABLE
    if validation is not None and validation.matches < validation.calls_compared:
        return Verdict.NOT_CAPTURABLE
    if speedup is None:
        return Verdict.EAGER_ONLY
    if speedup.low > HELP_THRESHOLD:
        return Verdict.GRAPHS_HELP
    if speedup.median > 1.0 and speedup.high >= 1.0:
        return Verdict.MARGINAL
    return Verdict.GRAPHS_DONT_HELP


def decide(facts: RunFacts) -> Verdict:
    """One run's verdict."""
    verdict = _measured(facts.captured, facts.has_target, facts.validation, facts.speedup)
    if facts.cpu_only_step:
        verdict = Verdict.GRAPHS_DONT_HELP
    if verdict is Verdict.EAGER_ONLY and facts.script_failed:
        return Verdict.SCRIPT_FAILED  # the script stopped before a verdict could be reached
    return verdict


def decide_ranks(facts: RanksFacts) -> Verdict:
    """The combined verdict: the worst a rank reached, or the combined figures' own when all agree."""
    if facts.rank_failed:
        return Verdict.SCRIPT_FAILED
    if facts.collective_error:
        return Verdict.NOT_CAPTURABLE
    worst = min(set(facts.rank_verdicts), key=VERDICT_ORDER.index) if facts.rank_verdicts else Verdict.EAGER_ONLY
    if worst in (Verdict.NOT_CAPTURABLE, Verdict.EAGER_ONLY) or not facts.all_reported:
        return worst
    return _measured(True, True, facts.validation, facts.speedup)
