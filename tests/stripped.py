"""Recorded runs as a worker that ran no profiler session leaves them: no eager or replay
trace. The worker stops writing them for a step that captures; the H200 recordings all
carry them, so the tests take them out (as tests/test_lost_kernels.py edits trace events)
and check the figures derived from the graph and CUDA events against the profiled ones of
the same run.

``with_evidence`` stands in for the worker's ``profiler-plan`` and ``op-sequence`` events:
the analysis reads them from the Evidence with ``getattr``, so a subclass that carries the
two lists is what a run with those events parses to.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.model.core import Report
from launchprof.run import Run, load_run
from launchprof.run.evidence import Evidence, parse_events

DATA = Path(__file__).parent / "data"
# Every recorded run with a measured replay: the runs the map of the profiler's consumers
# checked (runs/, predict/), then the other folders of recordings.
CAPTURED_FOLDERS = ("runs", "predict")


def strip_traces(run: Run) -> Run:
    """The run without its profiler traces: no ``trace`` event, no trace member."""
    return dataclasses.replace(run, events=[e for e in run.events if e.get("type") != "trace"], traces={})


def with_capture(run: Run, **changes: Any) -> Run:
    return dataclasses.replace(run, events=[{**e, **changes} if e.get("type") == "capture" else e for e in run.events])


def run_paths(folders: tuple[str, ...] = CAPTURED_FOLDERS) -> list[Path]:
    paths = sorted(p for folder in folders for p in (DATA / folder).glob("*.lprun"))
    if not paths:
        raise FileNotFoundError(f"no recorded runs under {DATA}/{{{','.join(folders)}}}")
    return paths


def run_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@dataclass(frozen=True)
class Pair:
    """One recorded run analysed twice: as recorded (profiled) and without its traces (derived)."""

    name: str
    run: Run
    profiled: Report
    derived: Report


def captured_pairs(folders: tuple[str, ...] = CAPTURED_FOLDERS) -> dict[str, Pair]:
    """Every recorded run of ``folders`` whose replay was measured, analysed with the device
    profile it carries, with and without its traces."""
    out = {}
    for path in run_paths(folders):
        run = load_run(path)
        profile = stored_profile(run.profile) if run.profile else None
        profiled = analyse(run, profile)
        if profiled.replay is None or profiled.replay.step_us is None:
            continue
        out[run_id(path)] = Pair(run_id(path), run, profiled, analyse(strip_traces(run), profile))
    assert len(out) >= 20, f"too few captured recorded runs: {sorted(out)}"
    return out


@dataclass(frozen=True)
class PlannedEvidence(Evidence):
    """Evidence with the worker's profiler plan and op sequences (stand-ins for its events)."""

    profiler_plan: list[Any] = field(default_factory=list)
    op_sequences: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    profiled: bool
    reason: str | None = None
    when: str = "start"


@dataclass(frozen=True)
class OpSequence:
    index: int
    count: int
    digest: str


@contextmanager
def with_evidence(monkeypatch: pytest.MonkeyPatch, plans: list[Plan] = (), ops: list[OpSequence] = ()) -> Iterator[None]:  # type: ignore[assignment]
    """``analyse`` reads runs as if their events held these plans and op sequences."""

    def parse(events: list[dict[str, Any]]) -> Evidence:
        ev = parse_events(events)
        fields = {f.name: getattr(ev, f.name) for f in dataclasses.fields(Evidence) if f.name not in ("profiler_plan", "op_sequences")}
        return PlannedEvidence(**fields, profiler_plan=list(plans), op_sequences=list(ops))

    with monkeypatch.context() as m:
        # the module, not the function of that name the package exports
        m.setattr(importlib.import_module("launchprof.analysis.build_report"), "parse_events", parse)
        yield
