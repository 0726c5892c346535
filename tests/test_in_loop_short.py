"""A run whose replays inside the script's loop matched too few calls (worker/plan.py gives
up on them after 6x the calls it needed) is still whole when the timing bursts after the
loop timed eager and replay: a note says so, not "stopped early" (three H200 runs in
tests/data/runs/ read "stopped early" above a full table of n=60 figures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.analysis.runinfo import IN_LOOP_SHORT, in_loop_short_note, run_info
from launchprof.run.evidence import parse_events
from launchprof.run import load_run

RUNS = Path(__file__).parent / "data" / "runs"


@pytest.mark.parametrize("name", ["bucketed_decode", "frozen_scalar", "data_dependent"])
def test_recorded_runs_whose_loop_fell_short_are_whole(name: str) -> None:
    run = load_run(RUNS / f"{name}.lprun")
    end = next(e for e in run.events if e.get("type") == "plan-end")
    assert end["reason"] == IN_LOOP_SHORT  # what the worker wrote
    report = analyse(run, stored_profile(run.profile))
    assert report.run.complete and report.run.cause is None
    assert report.eager.step_us.n >= 20 and report.replay.step_us.n >= 20
    said = [n for n in report.notes if "matched too few calls" in n]
    assert said == [f"the replays inside the script's loop matched too few calls to be timed there ({end['replays_timed']} timed in {end['calls']} calls); the timing bursts after them measured eager and replay"]


def _events(bursts: dict[str, int]) -> list[dict]:
    events = [
        {"type": "target", "name": "step"},
        {"type": "plan-end", "reason": IN_LOOP_SHORT, "calls": 88, "replays_timed": 3},
        {"type": "script-end", "status": "ok", "calls": 88},
    ]
    for kind, n in bursts.items():
        events.append({"type": "timing", "kind": kind, "mode": "burst", "burst": 0, "wall_us": [10.0] * n, "gpu_us": []})
        if n:  # a burst run that ended (worker/burst.py writes timing-end after the last burst)
            events.append({"type": "timing-end", "kind": kind, "samples": n, "seconds": 0.1, "stopped_early": n < 6})
    return events


def test_without_the_bursts_the_short_loop_is_still_a_stop() -> None:
    """Whole with both bursts ended, whatever --repeat made their count (6 samples here);
    a stop without the replay bursts."""
    for counts in ({"eager": 30, "replay": 30}, {"eager": 6, "replay": 6}):
        whole = parse_events(_events(counts))
        assert in_loop_short_note(whole) is not None and run_info(whole, {}, 40).cause is None, counts
    for bursts in ({"eager": 30}, {"eager": 30, "replay": 0}):
        ev = parse_events(_events(bursts))
        info = run_info(ev, {}, 40)
        assert in_loop_short_note(ev) is None and not info.complete and info.cause == IN_LOOP_SHORT, bursts

