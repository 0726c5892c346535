"""The bursts on two gloo ranks (CPU): with a collective in the step, the ranks must make the
same number of timed calls (or one waits for ever in an all-reduce the other never issues), and
each rank's time must include waiting for the slowest. The device synchronisation and CUDA
events are fakes, as in test_worker_bursts; the process group, the collectives and the
time-cap decision are real."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()), reason="needs torch.distributed with gloo")

# Rank 1's extra time per call: long against the scheduling delay of a loaded 2-core host,
# which rank 0's call pays while it waits for rank 1 in the all-reduce (0.02 s was not)
SLOW_S = 0.05
CAP_S = 0.6  # the time cap: reached after about 12 calls


class FakeEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.at - self.at) * 1e3


def _rank(rank: int, out: str, slow: str) -> None:
    torch.cuda.Event = FakeEvent  # type: ignore[misc]
    torch.cuda.synchronize = lambda *a, **k: None  # type: ignore[assignment]
    from launchprof.worker.burst import Kind, run_bursts
    from launchprof.worker.event_writer import EventWriter

    dist.init_process_group("gloo", init_method=f"file://{Path(out) / 'store'}", rank=rank, world_size=2)
    t = torch.ones(8)

    def step() -> None:
        if rank == 1 and slow == "before":
            time.sleep(SLOW_S)
        dist.all_reduce(t)
        if rank == 1 and slow == "after":
            time.sleep(SLOW_S)

    events = EventWriter(str(Path(out) / f"events{rank}.jsonl"))
    run_bursts([Kind("eager", [step]), Kind("replay", [step])], repeat=40, events=events, time_cap_s=CAP_S)
    events.close()
    dist.destroy_process_group()


def _run(tmp_path: Path, slow: str) -> list[tuple[dict, list[float]]]:
    ctx = mp.start_processes(_rank, args=(str(tmp_path), slow), nprocs=2, join=False, start_method="spawn")
    deadline = time.time() + 90
    while not ctx.join(timeout=1):
        if time.time() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("the ranks did not finish: a collective waits for a call the other rank never made")
    per_rank = []
    for rank in (0, 1):
        events = [json.loads(line) for line in (tmp_path / f"events{rank}.jsonl").read_text().splitlines()]
        ends = {e["kind"]: e for e in events if e["type"] == "timing-end"}
        walls = [w for e in events if e["type"] == "timing" for w in e["wall_us"]]
        per_rank.append((ends, walls))
    return per_rank


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def test_a_rank_waiting_in_the_steps_collective_times_the_wait(tmp_path):
    """Rank 1 is slow before the all-reduce: rank 0's step includes waiting for it."""
    (ends0, walls0), (ends1, _) = _run(tmp_path, "before")
    for kind in ("eager", "replay"):
        assert ends0[kind]["samples"] == ends1[kind]["samples"] < 40  # the cap stopped both, at the same call
    assert _median(walls0) >= 0.8 * SLOW_S * 1e6, "rank 0's step does not include waiting for rank 1"


def test_ranks_whose_times_differ_stop_at_the_same_call(tmp_path):
    """Rank 1 is slow after the all-reduce: its time reaches the cap long before rank 0's, yet
    both stop at the same call (alone, rank 1 would stop and leave rank 0 in an all-reduce for
    ever); and the barrier keeps rank 1's tail out of rank 0's next call."""
    (ends0, walls0), (ends1, walls1) = _run(tmp_path, "after")
    for kind in ("eager", "replay"):
        assert ends0[kind]["samples"] == ends1[kind]["samples"] < 40
        assert ends0[kind]["stopped_early"] and ends1[kind]["stopped_early"]
        assert ends0[kind]["seconds"] < 0.5 * ends1[kind]["seconds"]
    assert _median(walls1) >= 0.8 * SLOW_S * 1e6
    assert _median(walls0) < 0.5 * SLOW_S * 1e6, "rank 0's call included rank 1's previous call"
    assert os.environ.get("RANK") is None  # nothing leaked into this process
