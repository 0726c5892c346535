"""Starting the worker process, watching it, and stopping it cleanly.

The worker runs in its own process group so a timeout or Ctrl-C stops it and every
child it started (DataLoader workers, compile workers): no orphans. Its events file is
read as it grows, for the progress display, and once more at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchprof.commands.warm_worker import handed_over, kill, send, worker_env
from launchprof.worker.config import WorkerConfig


@dataclass(frozen=True)
class WorkerResult:
    events: list[dict[str, Any]]
    returncode: int | None
    timed_out: bool
    interrupted: bool
    wall_s: float
    log_path: Path | None


class EventReader:
    """Reads whole lines appended to the events file; a torn last line waits for more."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.events: list[dict[str, Any]] = []

    def poll(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        new: list[dict[str, Any]] = []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        for line in data[: end + 1].splitlines():
            try:
                new.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        self.offset += end + 1
        self.events.extend(new)
        return new


def read_events(path: Path) -> list[dict[str, Any]]:
    reader = EventReader(path)
    reader.poll()
    return reader.events


POLL_S = 0.05  # how often the events file is read for the progress display


def _wait(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Sleep until the next poll, or less: the worker's exit ends the wait at once, so the
    report does not wait out the rest of a poll interval."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def stop_signals_as_interrupt() -> dict[int, Any]:
    """A CI cancel (SIGTERM) or a closed terminal (SIGHUP) must stop the worker too: it runs
    in its own session and would otherwise keep the GPU. Treat them like Ctrl-C; returns the
    handlers to put back."""
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, _raise_interrupt)
        except (ValueError, OSError):  # not the main thread
            pass
    return previous


def _stop(proc: subprocess.Popen[bytes], first: int = signal.SIGTERM, grace: float = 5.0) -> None:
    """Signal the whole process group, then kill it if it does not go."""
    for sig, wait in ((first, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _put_back(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _start(
    config_path: Path, log_path: Path | None, output_to_stderr: bool, extra_env: dict[str, str] | None, waiting: subprocess.Popen[bytes] | None
) -> tuple[subprocess.Popen[bytes], Any]:
    """The running worker, and the log file it writes to when the CLI opened one: the
    waiting worker told its config, or a worker started now when there is none, it died
    since it was taken, or it would have the wrong environment."""
    if waiting is not None and (extra_env is not None or not send(waiting, config_path, _destination(log_path, output_to_stderr), log_path)):
        kill(waiting)
        waiting = None
    if waiting is not None:
        return waiting, None
    out = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed by run_worker
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "launchprof.worker", str(config_path)],
            stdin=subprocess.DEVNULL,
            stdout=out if out else (sys.stderr.fileno() if output_to_stderr else None),
            stderr=subprocess.STDOUT if out else None,
            env=worker_env(extra_env),
            start_new_session=True,
        )
    except BaseException:
        if out:
            out.close()
        raise
    return proc, out


def _destination(log_path: Path | None, output_to_stderr: bool) -> str:
    return "log" if log_path else ("stderr" if output_to_stderr else "terminal")


def run_worker(
    config: WorkerConfig,
    rundir: Path,
    timeout: float | None,
    show_output: bool,
    on_events: Callable[[list[dict[str, Any]]], None] | None = None,
    output_to_stderr: bool = False,
    extra_env: dict[str, str] | None = None,
    waiting: subprocess.Popen[bytes] | None = None,
) -> WorkerResult:
    """Run the worker to its end, a timeout or Ctrl-C.

    Shown output goes where ``python SCRIPT`` would send it, except that with
    ``output_to_stderr`` (a report is being written to standard output) the script's
    stdout joins its stderr, so nothing the script prints can corrupt the report.
    ``waiting`` is a worker started before the options were parsed (commands/warm_worker.py),
    which wires its output itself; it serves only the user's own environment."""
    config_path = rundir / "config.json"
    config.to_file(config_path)
    log_path = None if show_output else rundir / "script-output.log"
    # The stop handling comes first: from here a stop is an interrupt that stops the worker,
    # whichever moment it comes (a worker started but not yet watched would run on alone).
    previous = stop_signals_as_interrupt()
    handed_over(waiting)
    t0 = time.perf_counter()
    try:
        proc, out = _start(config_path, log_path, output_to_stderr, extra_env, waiting)
    except BaseException:
        _put_back(previous)
        if waiting is not None:
            kill(waiting)
        raise
    reader = EventReader(Path(config.events_path))
    timed_out = interrupted = False
    try:
        while proc.poll() is None:
            new = reader.poll()
            if new and on_events:
                on_events(new)
            if timeout is not None and time.perf_counter() - t0 > timeout:
                timed_out = True
                _stop(proc)
                break
            _wait(proc, POLL_S)
    except KeyboardInterrupt:
        interrupted = True
        _stop(proc, first=signal.SIGINT)
    finally:
        _put_back(previous)
        if proc.poll() is None:
            _stop(proc)
        else:  # the worker is gone; make sure nothing it started lingers
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if out:
            out.close()
    new = reader.poll()
    if new and on_events:
        on_events(new)
    return WorkerResult(
        events=reader.events,
        returncode=proc.returncode,
        timed_out=timed_out,
        interrupted=interrupted,
        wall_s=time.perf_counter() - t0,
        log_path=log_path,
    )
