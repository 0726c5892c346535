"""The bucket plan of the two bucket samples recorded on the H200 (tests/data/runs), checked
against the run's own raw ``bucket-*`` and ``call`` events, read here by hand and not through
launchprof.analysis.bucket_advice: the same data read twice, so a wrong mapping of an event onto the
report (a size's replay time from another size, a pool from the wrong stage, calls sent to the
wrong bucket) fails, and a re-recording does not."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from recorded import load, recorded, report_of


def _raw(events: list[dict[str, Any]], kind: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind and all(e.get(k) == v for k, v in match.items())]


def _served_by_hand(events: list[dict[str, Any]], kept: list[int]) -> tuple[dict[int, int], int]:
    """Calls per kept size (the smallest size that holds the call's batch), and calls above all."""
    [plan] = _raw(events, "bucket-plan")
    argument = plan["arguments"][0]["argument"]
    served, above = dict.fromkeys(kept, 0), 0
    for call in _raw(events, "call"):
        [arg] = [a for a in call["args"] if a["path"] == argument]
        fits = [s for s in sorted(kept) if s >= arg["shape"][0]]
        if fits:
            served[fits[0]] += 1
        else:
            above += 1
    return served, above


@pytest.mark.parametrize("name", recorded(["bucketed_decode", "batch_reduce"]))
def test_report_bucket_figures_match_the_raw_bucket_events(name):
    events = load(name).events
    plan = report_of(name).buckets
    assert plan is not None
    [end] = _raw(events, "bucket-end")
    private = {e["size"]: e for e in _raw(events, "bucket-measure", stage="private")}
    shared = {e["size"]: e for e in _raw(events, "bucket-measure", stage="shared")}
    kept = sorted(end["kept"])
    assert plan.recommended == kept and sorted(shared) == kept and set(kept) <= set(private)
    served, above = _served_by_hand(events, kept)
    assert plan.eager_calls == above and sum(served.values()) + above == len(_raw(events, "call")) == end["sequence_calls"]
    for m in plan.measured:
        s, p = shared[m.size], private[m.size]
        assert (m.replay_us, m.capture_ms, m.shared_added_bytes) == (s["replay_us"], s["capture_ms"], s["added_bytes"]), m.size
        assert m.pool_bytes == p["pool_bytes"] and m.calls == served[m.size], m.size
        checks = [c["match"] for c in _raw(events, "bucket-check", size=m.size)]
        assert m.matches == (all(checks) if checks else None), m.size
        # sane measurements: a real replay and capture took time, a graph owns memory
        assert m.replay_us > 0 and m.capture_ms > 0 and m.pool_bytes > 0, m.size
    assert [m.size for m in plan.measured] == kept
    # the shared pool is what the captures added, it never exceeds the private pools together
    assert plan.shared_pool_bytes == end["shared_pool_bytes"] == sum(e["added_bytes"] for e in shared.values())
    assert plan.shared_pool_bytes == max(e["pool_total_bytes"] for e in shared.values())
    assert plan.private_pool_bytes == end["private_pool_bytes"] == sum(private[s]["pool_bytes"] for s in kept)
    assert 0 < plan.shared_pool_bytes <= plan.private_pool_bytes
    ratio = statistics.median(end["eager_us"]) / statistics.median(end["plan_us"])
    assert plan.speedup is not None and plan.speedup.median == pytest.approx(ratio, rel=1e-9)
    assert plan.speedup.low <= plan.speedup.median <= plan.speedup.high


@pytest.mark.parametrize("name", recorded(["bucketed_decode", "batch_reduce"]))
def test_report_padding_safety_and_leaks_match_the_raw_checks(name):
    run = load(name)
    plan = report_of(name).buckets
    checks, leaks = _raw(run.events, "bucket-check"), _raw(run.events, "bucket-leak")
    assert checks, f"{name}: the worker checked no padded call"
    assert plan.padding_safe == (all(c["match"] for c in checks) and not leaks)
    assert [(x.size, x.calls_size, x.file, x.line, x.op) for x in plan.leaks] == [
        (e["size"], e["calls_size"], e["file"], e["line"], e["op"]) for e in leaks
    ]
    assert (plan.fix is not None) == (plan.padding_safe is False)
    for leak in plan.leaks:  # the line named is the reduction in the stored source
        line = run.sources[leak.file].splitlines()[leak.line - 1]
        assert line.strip() == leak.code.strip() and f".{leak.op}(" in line


def test_the_two_samples_differ_in_padding_safety():
    """bucketed_decode masks its padded rows, batch_reduce averages over them (the samples'
    docstrings): the recorded checks must say so, or the two tests above prove less."""
    assert report_of("bucketed_decode").buckets.padding_safe is True
    batch = report_of("batch_reduce").buckets
    assert batch.padding_safe is False and [x.op for x in batch.leaks] == ["mean"]
