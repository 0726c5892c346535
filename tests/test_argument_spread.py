"""A step whose time depends on its arguments, told apart on the H200's recorded samples.

The runs recorded on 2026-12-01 (second recording, with the CUPTI teardown) carry the
worker's own ``timing-start`` event with ``sets``; a run without one (older runs) gets the
event the worker would have written: 4 argument sets for eager and replay
(worker/burst.py, BURST_SETS), 1 for clone. The samples themselves are the H200's."""

from __future__ import annotations

import dataclasses
import random
import statistics

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.argument_spread import argument_spread, per_set
from launchprof.run.evidence import parse_events
from launchprof.worker.burst import BURST_SETS
from tests.recorded import load, recorded

START = {"type": "timing-start", "t": 0.0, "bursts": 6, "calls_per_burst": 10, "kinds": ["eager", "replay", "clone"],
         "target": 60, "sets": {"eager": BURST_SETS, "replay": BURST_SETS, "clone": 1}}


def with_sets(name: str):
    run = load(name)
    starts = [e for e in run.events if e["type"] == "timing-start"]
    if starts and "sets" in starts[0]:
        assert starts[0]["sets"] == START["sets"]  # what the worker wrote is what it did
        return run
    first = next(i for i, e in enumerate(run.events) if e["type"] == "timing")
    return dataclasses.replace(run, events=[*run.events[:first], START, *run.events[first:]])


def test_the_branching_step_is_told_apart_by_argument_set():
    """data_dependent branches on `use_residual % 2`: two sets take one kernel, two take three."""
    run = with_sets(recorded(["data_dependent"])[0])
    spread = argument_spread(parse_events(run.events))
    assert spread is not None and spread.ratio > 2
    fast, slow = sorted(spread.set_medians_us)[:2], sorted(spread.set_medians_us)[2:]
    assert max(fast) < min(slow) / 2  # two paths, two sets each
    samples = parse_events(run.events).burst_wall_us["eager"]
    assert spread.set_medians_us == [statistics.median(g) for g in per_set(samples, BURST_SETS)]
    notes = [n for n in analyse(run).notes if "differs between the" in n]
    assert len(notes) == 1 and f"{statistics.median(samples):.1f} µs" in notes[0]


@pytest.mark.parametrize("name", recorded(["decode_loop", "long_kernels", "side_effects", "two_streams_ok"]))
def test_steps_that_take_one_path_are_not_flagged(name):
    assert argument_spread(parse_events(with_sets(name).events)) is None
    assert not [n for n in analyse(with_sets(name)).notes if "differs between the" in n]


def test_the_same_samples_shuffled_are_not_flagged():
    """The split must follow the set order: data_dependent's samples in random order are
    one noisy, two-mode population, not argument dependence."""
    run = with_sets("data_dependent")
    ev = parse_events(run.events)
    shuffled = list(ev.burst_wall_us["eager"])
    random.Random(0).shuffle(shuffled)
    assert argument_spread(dataclasses.replace(ev, burst_wall_us={**ev.burst_wall_us, "eager": shuffled})) is None


def test_runs_without_the_set_count_are_not_guessed():
    run = load("data_dependent")
    assert argument_spread(parse_events(run.events)) is not None  # the recorded run states its sets
    older = [{k: v for k, v in e.items() if k != "sets"} if e["type"] == "timing-start" else e for e in run.events]
    assert argument_spread(parse_events(older)) is None
