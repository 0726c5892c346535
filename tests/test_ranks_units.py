"""The small parts of multi-GPU runs: per-rank file names, the worker's rank config, the
``rank`` event, the launcher's record of failed ranks, and when the runner stops silent ranks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from launchprof.ranks.launcher import failures_of
from launchprof.ranks.rank_paths import rank_folder_file, rank_path
from launchprof.ranks.rank_runner import EventReader, _stalled, _Watch, launcher_command, rank_output_tail
from launchprof.ranks.worker_side import announce_rank, for_rank
from launchprof.run.event_log import validate_events
from launchprof.worker.config import WorkerConfig
from launchprof.worker.event_writer import EventWriter

ROOT = Path(__file__).resolve().parent.parent


def config(tmp_path: Path, ranks: int = 2) -> WorkerConfig:
    return WorkerConfig("s.py", [], "step", str(tmp_path / "events.jsonl"), str(tmp_path / "trace.json"), ranks=ranks)


def test_rank_file_names():
    assert rank_path("out/report.lprun", 1) == Path("out/report.rank1.lprun")
    assert rank_path(Path("a/b.json"), 0) == Path("a/b.rank0.json")
    assert rank_folder_file("/tmp/run/events.jsonl", 3) == Path("/tmp/run/rank3/events.jsonl")


def test_a_rank_writes_into_its_own_folder_and_only_rank_0_calibrates(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    c = for_rank(config(tmp_path))
    assert c.events_path == str(tmp_path / "rank1" / "events.jsonl") and (tmp_path / "rank1").is_dir()
    assert c.trace_path == str(tmp_path / "rank1" / "trace.json") and c.calibrate is False
    monkeypatch.setenv("RANK", "0")
    assert for_rank(config(tmp_path)).calibrate is True


def test_a_single_gpu_worker_keeps_its_files_even_under_someone_elses_launcher(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    c = config(tmp_path, ranks=0)
    assert for_rank(c) == c


def test_the_rank_event_comes_first_and_validates(tmp_path, monkeypatch):
    for name, value in (("RANK", "1"), ("LOCAL_RANK", "1"), ("WORLD_SIZE", "2")):
        monkeypatch.setenv(name, value)
    events = EventWriter(str(tmp_path / "e.jsonl"))
    announce_rank(config(tmp_path), events)
    events.close()
    [e] = validate_events([json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()])
    assert (e.TYPE, e.rank, e.local_rank, e.world_size) == ("rank", 1, 1, 2)
    assert isinstance(e.pid, int) and isinstance(e.pgid, int)


def test_the_launcher_command_is_torchs_own(tmp_path):
    cmd = launcher_command(tmp_path / "c.json", tmp_path / "x.json", tmp_path / "logs", 2, False, "launchprof.worker")
    assert cmd[1:4] == ["-m", "launchprof.ranks.launcher", str(tmp_path / "x.json")]
    rest = cmd[4:]
    assert rest[:6] == ["--standalone", "--nproc-per-node", "2", "--max-restarts", "0", "--log-dir"]
    assert rest[-3:] == ["--module", "launchprof.worker", str(tmp_path / "c.json")] and "--redirects" in rest
    from torch.distributed.run import parse_args

    args = parse_args(rest)  # torchrun's own parser accepts every option
    assert (args.nproc_per_node, args.module, args.standalone, args.training_script) == ("2", True, True, "launchprof.worker")


class Failure:
    def __init__(self, code: int, pid: int) -> None:
        self.exitcode, self.pid = code, pid

    def signal_name(self) -> str:
        return {-9: "SIGKILL", -15: "SIGTERM"}[self.exitcode]


def test_failed_ranks_are_kept_with_their_exit_and_signal():
    exc = SimpleNamespace(failures={1: Failure(-9, 12), 0: Failure(86, 11)})
    assert failures_of(exc) == {"1": {"exitcode": -9, "signal": "SIGKILL", "pid": 12}, "0": {"exitcode": 86, "signal": None, "pid": 11}}


def _watch(tmp_path: Path, events: dict[int, list[dict]]) -> _Watch:
    readers = {}
    for rank, evs in events.items():
        path = tmp_path / f"{rank}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in evs))
        readers[rank] = EventReader(path)
        readers[rank].poll()
    return _Watch(readers, last_new={rank: 0.0 for rank in events})


FAILED = [{"type": "script-end", "status": "exit", "exit_code": 3}, {"type": "worker-end"}]


def test_ranks_silent_after_a_peer_failed_are_stopped(tmp_path):
    watch = _watch(tmp_path, {0: [{"type": "target"}], 1: FAILED})
    assert not _stalled(watch, now=10.0, stall_s=30.0)
    assert _stalled(watch, now=31.0, stall_s=30.0)
    assert "rank 1's script failed" in watch.stalled[0] and 1 not in watch.stalled


def test_a_rank_still_writing_or_a_peer_that_ended_well_stops_nothing(tmp_path):
    watch = _watch(tmp_path, {0: [{"type": "target"}], 1: FAILED})
    watch.last_new[0] = 20.0  # rank 0 wrote an event 11 s ago
    assert not _stalled(watch, now=31.0, stall_s=30.0)
    ok = _watch(tmp_path, {0: [{"type": "target"}], 1: [{"type": "script-end", "status": "ok"}, {"type": "worker-end"}]})
    assert not _stalled(ok, now=100.0, stall_s=30.0)


def test_a_ranks_output_tail_comes_from_the_launchers_log_files(tmp_path):
    log = tmp_path / "abc_1" / "attempt_0" / "1" / "stderr.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {i}\n" for i in range(20)) + "\n")
    assert rank_output_tail(tmp_path, 1, lines=3) == ["line 17", "line 18", "line 19"]
    assert rank_output_tail(tmp_path, 0) == []


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--nproc-per-node", "0"], "--nproc-per-node must be 1 or more (got 0)"),
        (["--nproc-per-node", "2", "--locate-async"], "--locate-async works on one GPU only"),
        (["--nproc-per-node", "2", "--compare", "compile"], "--compare works on one GPU only"),
        (["--nproc-per-node", "2", "--buckets", "1,2,4"], "--buckets works on one GPU only"),
        (["--nproc-per-node", "2", "--target", "nosuch"], "nosuch"),
    ],
)
def test_usage_errors_of_several_gpus_come_first(extra, says):
    """Exit 2 in one line, before anything is launched (this machine has no CUDA: a launch would exit 4)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", "sample_models/tp_mlp.py", *extra],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in proc.stderr
