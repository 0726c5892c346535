"""Starting every rank's worker under torch's launcher, watching them, stopping them all.

The launcher (:mod:`launchprof.ranks.launcher`) runs in its own process group, as the
single-GPU worker does; but torch's launcher starts each rank in a session of its own, so
stopping the launcher's group alone would leave the ranks running. Each rank therefore
announces its process group first (the ``rank`` event), the process tree under the launcher
is read as it runs, and a timeout, Ctrl-C, SIGTERM or the end of the launcher signals every
one of those groups: no orphans.

A rank whose script failed while the others go on writing nothing is most likely waiting in
a collective for it, until NCCL's own timeout (minutes): after :data:`STALL_S` seconds of
silence they are stopped, and the report says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchprof.ranks.rank_paths import rank_folder_file
from launchprof.commands.worker_runner import EventReader, WorkerResult, stop_signals_as_interrupt, worker_env
from launchprof.worker.config import WorkerConfig

# Seconds the other ranks may stay silent after one rank's script failed before they are stopped.
STALL_S = 30.0
# Lines of a rank's own output kept for the report when it died.
OUTPUT_TAIL = 12
# How torch's launcher stops the ranks still running when one fails (SIGKILL only after its
# shutdown timeout, 30 s): a rank that died of SIGKILL was killed by something else (the OOM killer).
STOP_SIGNALS = ("SIGTERM",)


@dataclass(frozen=True)
class RankRun:
    """One rank's worker as the CLI saw it: a WorkerResult of its own, and how it ended."""

    rank: int
    result: WorkerResult
    exit: dict[str, Any] | None = None  # the launcher's record of a failed rank: exitcode, signal
    stopped: str | None = None  # who stopped it and why, when it did not end by itself
    output_tail: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RanksResult:
    ranks: list[RankRun]
    returncode: int | None  # the launcher's
    timed_out: bool
    interrupted: bool
    wall_s: float
    log_path: Path | None  # the launcher's own output, when the script's output is hidden


@dataclass
class _Watch:
    """What the loop learns while the ranks run."""

    readers: dict[int, EventReader]
    groups: set[int] = field(default_factory=set)  # process groups to signal: ranks' and launcher's
    last_new: dict[int, float] = field(default_factory=dict)
    stalled: dict[int, str] = field(default_factory=dict)


def launcher_command(config_path: Path, exits: Path, logdir: Path, nproc: int, show_output: bool, module: str) -> list[str]:
    """torch.distributed.run's own options: a standalone rendezvous on a free local port (two
    analyses at once do not collide), no restarts (a restart would run the script twice), every
    rank's output in its own log file (and on the terminal with ``--tee``)."""
    return [
        sys.executable, "-m", "launchprof.ranks.launcher", str(exits),
        "--standalone", "--nproc-per-node", str(nproc), "--max-restarts", "0",
        "--log-dir", str(logdir), "--tee" if show_output else "--redirects", "3",
        "--module", module, str(config_path),
    ]  # fmt: skip


def child_pids(pid: int) -> list[int]:
    """The launcher's child processes (the ranks), from /proc; empty where /proc has no such file."""
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                out += [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        pass
    return out


def _signal_groups(groups: set[int], sig: int) -> None:
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _stop_all(proc: subprocess.Popen[bytes], watch: _Watch, first: int = signal.SIGTERM, grace: float = 5.0) -> None:
    """Signal every rank's group and the launcher's, then kill what is left."""
    watch.groups.update(child_pids(proc.pid))
    for sig, wait in ((first, grace), (signal.SIGKILL, 5.0)):
        _signal_groups(watch.groups | {proc.pid}, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _poll(watch: _Watch, on_events: Callable[[list[dict[str, Any]]], None] | None, now: float) -> None:
    for rank, reader in watch.readers.items():
        new = reader.poll()
        if not new:
            continue
        watch.last_new[rank] = now
        for e in new:
            if e.get("type") == "rank" and isinstance(e.get("pgid"), int):
                watch.groups.add(e["pgid"])
        if rank == 0 and on_events:
            on_events(new)


def _failed_peer(watch: _Watch) -> int | None:
    """A rank whose worker finished after its script failed (exception or non-zero exit)."""
    for rank, reader in watch.readers.items():
        end = next((e for e in reversed(reader.events) if e.get("type") == "script-end"), None)
        if end is not None and end.get("status") in ("exception", "exit") and any(e.get("type") == "worker-end" for e in reader.events):
            return rank
    return None


def _stalled(watch: _Watch, now: float, stall_s: float) -> bool:
    """After a rank's script failed, every unfinished rank silent for ``stall_s``: stop them."""
    failed = _failed_peer(watch)
    if failed is None:
        return False
    waiting = [r for r, reader in watch.readers.items() if not any(e.get("type") == "worker-end" for e in reader.events)]
    if not waiting or any(now - watch.last_new.get(r, 0.0) < stall_s for r in waiting):
        return False
    for r in waiting:
        watch.stalled[r] = (
            f"stopped by launchprof: rank {failed}'s script failed and this rank wrote nothing for {stall_s:g} s "
            f"after it (most likely waiting in a collective for rank {failed})"
        )
    return True


def run_ranks(
    config: WorkerConfig,
    rundir: Path,
    nproc: int,
    timeout: float | None,
    show_output: bool,
    on_events: Callable[[list[dict[str, Any]]], None] | None = None,
    output_to_stderr: bool = False,
    module: str = "launchprof.worker",
    stall_s: float = STALL_S,
) -> RanksResult:
    """Run the worker on ``nproc`` ranks to their end, a timeout or Ctrl-C.

    ``module`` is what the launcher runs on each rank (the worker; tests give a wrapper)."""
    config = dataclasses.replace(config, ranks=nproc)
    config_path, exits, logdir = rundir / "config.json", rundir / "exits.json", rundir / "rank-logs"
    config.to_file(config_path)
    log_path = None if show_output else rundir / "launcher-output.log"
    out = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed below
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        launcher_command(config_path, exits, logdir, nproc, show_output, module),
        stdin=subprocess.DEVNULL,
        stdout=out if out else (sys.stderr.fileno() if output_to_stderr else None),
        stderr=subprocess.STDOUT if out else None,
        env=worker_env(),
        start_new_session=True,
    )
    watch = _Watch({r: EventReader(rank_folder_file(config.events_path, r)) for r in range(nproc)})
    timed_out = interrupted = False
    previous = stop_signals_as_interrupt()
    try:
        while proc.poll() is None:
            now = time.perf_counter()
            _poll(watch, on_events, now)
            watch.groups.update(child_pids(proc.pid))
            if timeout is not None and now - t0 > timeout:
                timed_out = True
                _stop_all(proc, watch)
                break
            if _stalled(watch, now, stall_s):
                _stop_all(proc, watch)
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        interrupted = True
        _stop_all(proc, watch, first=signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            _stop_all(proc, watch)
        _signal_groups(watch.groups | {proc.pid}, signal.SIGKILL)  # nothing any rank started lingers
        if out:
            out.close()
    _poll(watch, on_events, time.perf_counter())
    wall = time.perf_counter() - t0
    failures = _read_exits(exits)
    ranks = [_rank_run(r, watch, failures, log_path, logdir, wall, timed_out, interrupted) for r in range(nproc)]
    return RanksResult(ranks, proc.returncode, timed_out, interrupted, wall, log_path)


def _read_exits(path: Path) -> dict[int, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {int(k): v for k, v in data.items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        return {}


def _rank_run(
    rank: int, watch: _Watch, failures: dict[int, dict[str, Any]], log_path: Path | None, logdir: Path,
    wall: float, timed_out: bool, interrupted: bool,
) -> RankRun:
    events = watch.readers[rank].events
    finished = any(e.get("type") == "worker-end" for e in events)
    failed = failures.get(rank)
    code = failed.get("exitcode") if failed else (0 if finished else None)
    stopped = watch.stalled.get(rank)
    # The launcher stops the other ranks (SIGTERM, then SIGKILL) when one fails by itself.
    culprits = sorted(r for r, f in failures.items() if r != rank and f.get("signal") not in STOP_SIGNALS)
    by_launcher = failed is None or failed.get("signal") in STOP_SIGNALS
    if stopped is None and not finished and by_launcher and culprits and not (timed_out or interrupted):
        stopped = f"stopped by the launcher after rank {', '.join(map(str, culprits))} failed"
    result = WorkerResult(events, code, timed_out, interrupted, wall, log_path)
    return RankRun(rank, result, failed, stopped, rank_output_tail(logdir, rank))


def rank_output_tail(logdir: Path, rank: int, lines: int = OUTPUT_TAIL) -> list[str]:
    """The last lines of a rank's own output (stderr, else stdout), from the launcher's log files
    (``LOGDIR/<run id>/attempt_0/<local rank>/stderr.log``)."""
    for name in ("stderr.log", "stdout.log"):
        for path in sorted(logdir.glob(f"*/attempt_*/{rank}/{name}")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            kept = [line for line in text if line.strip()]
            if kept:
                return kept[-lines:]
    return []
