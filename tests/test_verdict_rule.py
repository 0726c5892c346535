"""The one verdict rule at its boundaries, ``replay-invalid``, the figure the verdict reads
(``speedup_as_used``), compare's order, the README's table and the headline's order."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import reports
from launchprof.analysis.build_report import analyse
from launchprof.analysis.comparison import compare
from launchprof.analysis.verdict import HELP_THRESHOLD, MAX_PAYBACK_REPLAYS, RANKED, RunFacts, decide, verdict_rank
from launchprof.enums import Verdict
from launchprof.model.step_timing import Speedup, Validation
from launchprof.render import figures
from launchprof.render.console import headline
from launchprof.run.file import load_run

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "tests" / "data" / "runs"
OK = Validation(4, 4, 0.0)


def _facts(low: float, median: float, high: float, payback: float | None = 50.0, **kw) -> RunFacts:
    return RunFacts(True, True, OK, Speedup(median, low, high), payback_replays=payback, **kw)


@pytest.mark.parametrize(
    "low, median, high, payback, verdict",
    [
        (1.1, 1.2, 1.3, 50.0, "graphs-help"),  # the low end exactly at the threshold
        (1.0999, 1.2, 1.3, 50.0, "marginal"),  # just under it
        (1.1, 1.2, 1.3, 10_000.0, "graphs-help"),  # the payback exactly at its limit
        (1.1, 1.2, 1.3, 10_000.5, "marginal"),  # just over it
        (3.0, 3.1, 3.2, 50_000.0, "marginal"),  # fast, but set-up is never won back in practice
        (2.0, 3.0, 4.0, None, "graphs-help"),  # an unknown payback (an old report) does not hold it back
        (0.97, 1.0, 1.08, None, "marginal"),  # the median exactly 1.0
        (0.95, 0.9999, 1.05, None, "marginal"),  # below 1.0, but the interval reaches 1.0: not shown slower
        (0.90, 0.95, 0.9999, None, "graphs-dont-help"),  # the whole interval below 1.0
        (0.90, 0.95, 1.0, None, "marginal"),  # its high end exactly at 1.0
        (0.97, 1.03, 1.08, 105.0, "marginal"),  # the 1.03x with overlapping spreads
    ],
)
def test_the_thresholds(low, median, high, payback, verdict):
    assert HELP_THRESHOLD == 1.1 and MAX_PAYBACK_REPLAYS == 10_000
    assert decide(_facts(low, median, high, payback)) == verdict


FAST = (2.3, 2.4, 2.5)


@pytest.mark.parametrize(
    "facts, verdict",
    [
        (RunFacts(True, True, Validation(6, 1, 0.4), Speedup(2.4, 2.3, 2.5)), "replay-invalid"),
        (_facts(*FAST, error_hazards=("stream-race",)), "replay-invalid"),  # the sanitizer's race, validation matched
        (_facts(*FAST, error_hazards=("frozen-scalar",)), "replay-invalid"),
        (_facts(*FAST, error_hazards=("reallocated-input",)), "replay-invalid"),  # a rebound global
        # Captured only once launchprof detached a kept graph: the code as written does not capture.
        (_facts(*FAST, error_hazards=("kept-autograd-graph",)), "not-capturable"),
        (_facts(*FAST, error_hazards=("kept-autograd-graph", "stream-race")), "replay-invalid"),
        (RunFacts(True, False, error_hazards=("stream-race",)), "not-capturable"),  # capture failed: only that
        (_facts(*FAST, error_hazards=()), "graphs-help"),
    ],
)
def test_replay_invalid_and_no_graphs_help_over_an_error(facts, verdict):
    assert decide(facts) == verdict


def test_compare_ranks_replay_invalid_below_every_working_graph():
    assert [verdict_rank(v) for v in RANKED] == list(range(len(RANKED)))
    assert verdict_rank("replay-invalid") < verdict_rank("graphs-dont-help")
    assert verdict_rank("not-capturable") < verdict_rank("replay-invalid")
    assert verdict_rank("eager-only") is None and verdict_rank("from-the-future") is None
    good = reports.graphs_help()
    bad = dataclasses.replace(good, verdict="replay-invalid", validation=Validation(8, 3, 0.5))
    assert compare(good, bad).verdict_worse
    assert not compare(bad, good).verdict_worse
    assert compare(dataclasses.replace(good, verdict="not-capturable"), bad).verdict_worse is False


def test_readme_table_lists_every_verdict_and_states_the_rule():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Verdicts") : text.index("## Commands")]
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.M)
    assert sorted(listed) == sorted(v.value for v in Verdict)
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| (.*) \|$", section, flags=re.M))
    assert f"{HELP_THRESHOLD}x" in rows["graphs-help"] and f"{MAX_PAYBACK_REPLAYS:,} replays" in rows["graphs-help"]
    assert "1.0x" in rows["marginal"] and "1.0x" in rows["graphs-dont-help"]
    assert "capture failed" in rows["not-capturable"] and "differs from eager" in rows["replay-invalid"]
    assert "`analysis/verdict.py`" in section and "`speedup_as_used`" in section


def _report(name: str):
    return analyse(load_run(RUNS / f"{name}.lprun"))


def _evidence(name: str):
    from launchprof.run.evidence import parse_events

    return parse_events(load_run(RUNS / f"{name}.lprun").events)


@pytest.mark.parametrize(
    "name, verdict",
    [
        ("frozen_scalar", "replay-invalid"),  # captured; 5 of 6 calls differ
        ("reallocated_global", "replay-invalid"),
        ("data_dependent", "replay-invalid"),
        ("hidden_sync", "not-capturable"),  # capture failed
        ("train_step_keeps_loss", "not-capturable"),  # captured only once the kept graph was detached
        ("side_effects", "marginal"),  # as used, with the clone of the kept output (one eager op): 1.38x, interval 0.71-3.88x
        ("hf_static_decode", "graphs-help"),  # as used 9.9x
        ("long_kernels", "marginal"),  # 0.99x, an interval that reaches past 1.0: no measurable gain or loss
    ],
)
def test_recorded_verdicts(name, verdict):
    assert _report(name).verdict == verdict


def test_speedup_as_used_adds_the_needed_clone_to_each_replay():
    r = _report("hf_static_decode")
    assert r.outputs is not None and r.outputs.kept and r.outputs.clone_needed_us
    used, plain = r.speedup_as_used, r.speedup
    assert used is not None and used.median < plain.median
    # One eager op per kept tensor: the timed-alone clone (22 µs) is mostly its two synchronisations.
    tensors = len({k.output for k in r.outputs.kept})
    op_us = _evidence("hf_static_decode").host_eager_op_us
    expected = r.eager.step_us.median / (r.replay.step_us.median + tensors * op_us)
    assert used.median == pytest.approx(expected, rel=1e-9)
    assert used.low <= used.median <= used.high
    assert r.breakeven_replays_as_used is not None and r.breakeven_replays_as_used > r.breakeven_replays
    # No kept output: no figure, and the headline shows the speedup alone.
    assert _report("decode_loop").speedup_as_used is None
    assert _report("decode_loop").breakeven_replays_as_used is None


def _lines(report) -> list[str]:
    return headline(report).plain.splitlines()


def test_the_headline_leads_with_the_replay_step_then_the_speedup():
    lines = _lines(_report("decode_loop"))
    assert lines[0].startswith("CUDA graphs help")
    assert lines[1] == "replay 462.0 µs per step (eager 1.86 ms)"
    assert lines[2].startswith("speedup 4.03× (95% interval")
    assert not any("bootstrap" in line or "ratio of" in line for line in lines)  # the method is in the table


def test_the_headline_shows_the_speedup_as_used_labelled():
    line = next(x for x in _lines(_report("hf_static_decode")) if x.startswith("speedup"))
    assert "as your code uses it, with the output clone it needs" in line
    assert "(10.31× without it)" in line


def test_replay_invalid_reads_once_fixed():
    r = _report("frozen_scalar")
    lines = _lines(r)
    assert lines[0].startswith("captures, but the replay differs from eager")
    assert lines[1].startswith("5 of 6 compared calls differ")
    assert any(x.startswith("speedup once fixed 2.38×") for x in lines)
    assert "not capturable" not in headline(r).plain
    assert "once fixed" in figures.verdict_sentence(r)


def test_a_marginal_gain_reads_as_no_clear_gain():
    base = reports.graphs_help()
    small = dataclasses.replace(base, verdict="marginal", speedup=Speedup(1.06, 1.02, 1.09))
    assert figures.verdict_label(small) == "no clear gain (marginal)"
    text = headline(small).plain
    assert "help a little" not in text and "under the 1.10× a clear gain needs" in text
    straddles = dataclasses.replace(small, speedup=Speedup(1.03, 0.98, 1.08))
    assert figures.verdict_label(straddles) == "no measurable gain (marginal)"
    slow_payback = dataclasses.replace(base, verdict="marginal", breakeven_replays=25_000.0)
    assert "only after 25,000 replays (more than 10,000)" in headline(slow_payback).plain


def test_the_dynamic_shape_headline_states_its_plan_and_unsafe_padding():
    unsafe = _report("batch_reduce")
    text = headline(unsafe).plain
    assert unsafe.verdict == "marginal"  # its interval's low end (host speed of other processes) is under 1.1x
    helped = headline(dataclasses.replace(unsafe, verdict=Verdict.GRAPHS_HELP)).plain
    assert helped.startswith("CUDA graphs help once padding is safe")
    assert "one graph serves 1 of 7 shapes" in " ".join(text.split())
    assert "5 graphs (sizes 1, 2, 4, 8, 16) serve 75 of 75 calls (100%)" in " ".join(text.split())
    assert "write a masked mean first" in text and "h.mean(dim=0)" in text
    safe = headline(_report("dynamic_shapes")).plain
    assert safe.startswith("CUDA graphs help  [") and "padding is NOT safe" not in safe
    assert "the bucket plan: 5 graphs" in " ".join(safe.split())
    decode = " ".join(headline(_report("bucketed_decode")).plain.split())
    assert "1 of 9 shapes" in decode and "6 graphs (sizes 1, 2, 4, 8, 16, 24)" in decode


def test_replay_invalid_is_not_capture_safe_and_a_fixed_capture_fails_junits_capture_check():
    from launchprof.api.safety import is_capture_safe
    from launchprof.render.junit import capture_check

    clean = dataclasses.replace(reports.graphs_help(), hazards=[])
    assert is_capture_safe(clean)
    assert not is_capture_safe(dataclasses.replace(clean, verdict="replay-invalid"))
    kept = _report("train_step_keeps_loss")  # a replay measured once fixed; the code as written fails
    assert kept.replay is not None and capture_check(kept).status == "failed"
    assert capture_check(_report("frozen_scalar")).status == "passed"  # it captures; the validation check fails
