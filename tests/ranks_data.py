"""Per-rank inputs for the multi-GPU tests, built from the H200 run files in tests/data/runs.

A rank is a recorded run (the same sample as rank 0 and 1, or two samples to make the ranks
differ); its traces can be edited the way a collective would show in them (a kernel renamed
to NCCL's all-reduce kernel, a kernel dropped from the replay) and its events cut short the
way a rank that died leaves them.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launchprof.analysis import analyse
from launchprof.ranks.combine import RankInput
from launchprof.run import load_run
from launchprof.run.file import Run

RUNS = Path(__file__).resolve().parent / "data" / "runs"
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def recorded(sample: str) -> Run:
    return load_run(RUNS / f"{sample}.lprun")


def burst_median(sample: str, kind: str) -> float:
    """The median of a recorded run's ``kind`` (eager, replay) burst wall samples, read from
    its raw ``timing`` events: the step time a report of it should carry."""
    burst = [e for e in recorded(sample).events if e.get("type") == "timing" and e.get("mode") == "burst" and e.get("kind") == kind]
    samples = [x for e in burst for x in e["wall_us"]]
    assert len(samples) >= 10, f"{sample}: too few recorded {kind} samples"
    return statistics.median(samples)


def rank_input(rank: int, run: Run | str, **kw: Any) -> RankInput:
    """One rank that ran ``run`` (a Run or a recorded sample's name), analysed as analyze would."""
    run = recorded(run) if isinstance(run, str) else run
    kw.setdefault("exit_code", 0)
    return RankInput(rank=rank, report=analyse(run), run=run, run_file=f"out/report.rank{rank}.lprun", **kw)


def with_trace(run: Run, what: str, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Run:
    """The run with its ``what`` trace's events replaced by ``edit(events)``."""
    trace = run.trace(what)
    assert trace is not None, f"{run.path} has no {what} trace"
    trace = {**trace, "traceEvents": edit(list(trace["traceEvents"]))}
    member = run.header.traces[what]
    return dataclasses.replace(run, traces={**run.traces, member: gzip.compress(json.dumps(trace).encode())})


def kernels_where(match: Callable[[dict[str, Any]], bool], name: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """An edit that renames every kernel event ``match`` accepts."""

    def edit(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**e, "name": name} if e.get("cat") == "kernel" and match(e) else e for e in events]

    return edit


def dropping(match: Callable[[dict[str, Any]], bool]) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """An edit that removes every kernel event ``match`` accepts."""
    return lambda events: [e for e in events if not (e.get("cat") == "kernel" and match(e))]


def on_stream(stream: int) -> Callable[[dict[str, Any]], bool]:
    return lambda e: (e.get("args") or {}).get("stream") == stream


def named(part: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: part in str(e.get("name"))


def cut_after(run: Run, event_type: str) -> Run:
    """The run as a worker that died right after its first ``event_type`` event leaves it."""
    end = next(i for i, e in enumerate(run.events) if e.get("type") == event_type)
    return dataclasses.replace(run, events=run.events[: end + 1])
