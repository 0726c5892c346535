"""Every branch of the one verdict rule: a single run's and the combined ranks'."""

from __future__ import annotations

import pytest

from launchprof.enums import Verdict
from launchprof.model.step_timing import Speedup, Validation
from launchprof.analysis.verdict import VERDICT_ORDER, RanksFacts, RunFacts, decide, decide_ranks

OK = Validation(3, 3, 0.0)
MISMATCH = Validation(4, 3, 0.5)
FAST = Speedup(3.0, 2.9, 3.1)


@pytest.mark.parametrize(
    "facts, verdict",
    [
        (RunFacts(True, True, OK, Speedup(3.0, 2.8, 3.2)), "graphs-help"),
        (RunFacts(True, True, OK, Speedup(1.15, 1.05, 1.2)), "marginal"),
        (RunFacts(True, True, OK, Speedup(1.05, 1.01, 1.08)), "marginal"),
        (RunFacts(True, True, OK, Speedup(0.9, 0.88, 0.93)), "graphs-dont-help"),
        (RunFacts(False, None), "eager-only"),
        (RunFacts(True, None), "eager-only"),  # never reached capture
        (RunFacts(True, False), "not-capturable"),
        (RunFacts(True, True, MISMATCH, FAST), "replay-invalid"),  # captured; the replay differs
        (RunFacts(True, True, OK, None), "eager-only"),  # captured, but no speedup to judge
        # The step launched no GPU work: a replay skips its CPU work, whatever the timings say.
        (RunFacts(True, True, OK, FAST, cpu_only_step=True), "graphs-dont-help"),
        (RunFacts(True, None, cpu_only_step=True), "graphs-dont-help"),
        # The script stopped the run before a verdict could be reached.
        (RunFacts(True, None, script_failed=True), "script-failed"),
        (RunFacts(False, None, script_failed=True), "script-failed"),
        (RunFacts(True, True, OK, None, script_failed=True), "script-failed"),
        # A verdict that was reached stands: the failure came after it.
        (RunFacts(True, True, OK, FAST, script_failed=True), "graphs-help"),
        (RunFacts(True, False, script_failed=True), "not-capturable"),
        (RunFacts(True, None, cpu_only_step=True, script_failed=True), "graphs-dont-help"),
    ],
)
def test_one_run(facts, verdict):
    assert decide(facts) == verdict
    assert isinstance(decide(facts), Verdict)


@pytest.mark.parametrize(
    "facts, verdict",
    [
        # A rank that failed, or a collective error between ranks, decides before anything else.
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, rank_failed=True, speedup=FAST), "script-failed"),
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, rank_failed=True, collective_error=True), "script-failed"),
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, collective_error=True, speedup=FAST), "replay-invalid"),
        (RanksFacts((Verdict.GRAPHS_HELP, Verdict.NOT_CAPTURABLE), collective_error=True), "not-capturable"),
        # The worst rank's verdict, when it is one the combined figures cannot overturn.
        (RanksFacts((Verdict.GRAPHS_HELP, Verdict.NOT_CAPTURABLE), speedup=FAST), "not-capturable"),
        (RanksFacts((Verdict.GRAPHS_HELP, Verdict.EAGER_ONLY), speedup=FAST), "eager-only"),
        (RanksFacts((), speedup=FAST), "eager-only"),
        # A rank left no report: the worst of those that did.
        (RanksFacts((Verdict.GRAPHS_HELP, Verdict.MARGINAL), all_reported=False, speedup=FAST), "marginal"),
        # Every rank reported and none was stopped short: the combined speedup decides.
        (RanksFacts((Verdict.MARGINAL, Verdict.GRAPHS_HELP), validation=OK, speedup=FAST), "graphs-help"),
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, validation=OK, speedup=Speedup(0.9, 0.88, 0.93)), "graphs-dont-help"),
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, validation=MISMATCH, speedup=FAST), "replay-invalid"),
        (RanksFacts((Verdict.GRAPHS_HELP, Verdict.REPLAY_INVALID), validation=OK, speedup=FAST), "replay-invalid"),
        (RanksFacts((Verdict.GRAPHS_HELP,) * 2, validation=OK, speedup=None), "eager-only"),
    ],
)
def test_combined_ranks(facts, verdict):
    assert decide_ranks(facts) == verdict


def test_the_order_runs_from_the_worst():
    assert VERDICT_ORDER[0] is Verdict.SCRIPT_FAILED and VERDICT_ORDER[-1] is Verdict.GRAPHS_HELP
    assert set(VERDICT_ORDER) == set(Verdict) - {Verdict.STATIC_ONLY}
