"""``--compare compile --compile-rounds 3`` recorded on the H200 (2026-12-02, ``scripts/gpu-check
--compile`` with ``COMPILE_ARGS="--compile-rounds 3"``, torch 2.11.0+cu130), re-analysed on CPU
through the product's path (load_run -> analyse).

What the GPU showed: frozen_scalar's reduce-overhead compiles ran 142.9, 86.9 and 151.7 µs a
call in one process (the same step, compiled afresh each time), so the report shows the
median one and the advice says the range; two_streams_ok's three agreed within 15%, and its
advice says nothing of them. Each figure is recomputed here from the raw events: each
round's burst samples under its own kind, the rounds' medians, the median round.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.render.words.format import duration
from launchprof.run import load_run

RUNS = Path(__file__).parent / "data" / "compile_rounds"
FIELDS = {"compile": "compile", "compile_no_cudagraphs": "compile-no-cudagraphs"}
NAMES = ["frozen_scalar", "two_streams_ok"]


def _raw_rounds(events: list[dict], kind: str) -> list[tuple[int, float, float]]:
    """(round, burst median, compile_s) per round, from the raw events, in round order."""
    out = []
    for e in events:
        if e.get("type") == "compile" and e.get("field", "").split("@")[0] == kind:
            samples = [v for t in events if t.get("type") == "timing" and t.get("kind") == e["field"] for v in t["wall_us"]]
            out.append((int(e["round"]), statistics.median(samples), float(e["compile_s"])))
    return out


def test_the_recorded_runs_are_there() -> None:
    assert sorted(p.stem for p in RUNS.glob("*.lprun")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_median_round_stands_for_each_mode(name: str) -> None:
    run = load_run(RUNS / f"{name}.lprun")
    report = analyse(run, stored_profile(run.profile))
    for field, kind in FIELDS.items():
        result = getattr(report, field)
        rounds = _raw_rounds(run.events, kind)
        assert [r for r, _, _ in rounds] == [1, 2, 3], (name, field)
        medians = [m for _, m, _ in rounds]
        assert result.rounds_us == pytest.approx(medians)
        assert result.step_us.median == pytest.approx(statistics.median(medians))
        assert result.details["round"] == 1 + medians.index(statistics.median(medians))
        assert result.compile_s == pytest.approx(rounds[0][2])  # the first compile, not a cached one
        assert result.rounds_compile_s[0] > 3 * max(result.rounds_compile_s[1:]) or field == "compile_no_cudagraphs"
        spread = max(medians) > 1.15 * min(medians)
        column = "torch.compile" if field == "compile" else "no graphs"
        said = f"{duration(min(medians))} to {duration(max(medians))} ({column})" in (report.compile.advice or "")
        assert said == spread, (name, field, medians, report.compile.advice)
