"""Runs recorded on an H200, packed as ``.lprun`` files (scripts/record-test-data).

Tests read them through the product's own path, ``launchprof.run.load_run``: the run
file stores the sources its events point at, so no path is rewritten here.
"""

from __future__ import annotations

import re
from pathlib import Path

from launchprof.analysis import analyse
from launchprof.run.evidence import Evidence, parse_events
from launchprof.model.core import Report
from launchprof.run import Run, load_run

DATA = Path(__file__).parent / "data"
RUNS = DATA / "runs"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def run_names() -> list[str]:
    """Every recorded run; an empty list fails, so no parametrised test passes on nothing."""
    names = sorted(p.stem for p in RUNS.glob("*.lprun"))
    if not names:
        raise FileNotFoundError(f"no recorded runs (*.lprun) under {RUNS}: run scripts/record-test-data")
    return names


def recorded(names: list[str]) -> list[str]:
    """``names``, each of which must be recorded: a missing one fails the collection."""
    missing = sorted(set(names) - set(run_names()))
    if missing:
        raise FileNotFoundError(f"recorded runs missing under {RUNS}: {', '.join(missing)}")
    return names


def load(name: str) -> Run:
    return load_run(RUNS / f"{name}.lprun")


def load_evidence(name: str) -> Evidence:
    return parse_events(load(name).events)


def report_of(name: str, profile: object = None) -> Report:
    return analyse(load(name), profile)


def expected_markers(path: Path) -> set[tuple[str, str, int]]:
    """``# expect: kind[, kind]`` markers in a sample model: (kind, file name, line)."""
    out = set()
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = re.search(r"#\s*expect:\s*([a-z\-, ]+)", line)
        if m:
            for kind in m.group(1).split(","):
                out.add((kind.strip(), path.name, i))
    return out
