"""The worker process, started as ``launchprof analyze`` starts, before the CLI has parsed
its options.

The worker's first second or more goes to importing torch (3 s on the H200 host, where the
CLI's own imports and option checks took 0.4-0.6 s before it could start the worker). A
worker started with ``--wait`` imports torch and then waits for one line on its standard
input: the config path and where the script's output goes. The CLI sends it once every
usage check has passed, so a usage error still exits 2 before anything of the user's runs;
otherwise (an error, ``--help``, several ranks, a worker that died) the waiting worker is
killed, having run nothing but torch's import.

Standard library only: this runs before the CLI imports anything.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# Options after which the waiting worker would never be used: help, and torch's launcher
# (each rank is its own worker).
NOT_WANTED = ("-h", "--help", "--nproc-per-node")

_waiting: list[subprocess.Popen[bytes]] = []


def worker_env(extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """The user's environment, unchanged but for unbuffered output and launchprof on the path:
    the script sees the variables it would see under ``python SCRIPT`` (NCCL's included)."""
    env = {**os.environ, **(extra_env or {}), "PYTHONUNBUFFERED": "1"}
    # The worker imports launchprof from the same place as this CLI, whatever the cwd: the
    # folder that holds the package (the package's own folder there would make its
    # subpackages, model, run, events..., shadow the user's modules of those names). An
    # installed launchprof is found from the interpreter's own path: site-packages put ahead
    # of the user's PYTHONPATH would let an installed library win over the user's copy of it.
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    if not _is_site_dir(package_root):
        env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _is_site_dir(folder: str) -> bool:
    import site

    try:
        sites = [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:  # an embedded or old-virtualenv site module
        sites = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return any(os.path.realpath(folder) == os.path.realpath(p) for p in sites)


def wanted(argv: list[str]) -> bool:
    """Whether this command line will start one worker: ``analyze`` with a script, no help,
    one process, and the three standard streams open (a child given a closed one could
    open a file in its place)."""
    if len(argv) < 2 or argv[0] != "analyze":
        return False
    own = argv[: argv.index("--")] if "--" in argv else argv  # after "--": the script's arguments
    if any(a == flag or a.startswith(flag + "=") for a in own for flag in NOT_WANTED):
        return False
    return all(stream is not None for stream in (sys.stdin, sys.stdout, sys.stderr))


def prestart(argv: list[str]) -> None:
    """Start the waiting worker for this command line, if it will use one.

    Everything it prints before it is told where the script's output goes (an interpreter
    start hook, torch's import) is held in two anonymous files given as its standard output
    and error; the CLI's own two are passed along for the moment it is told
    (launchprof/worker/held_output.py)."""
    if not wanted(argv):
        return
    kept: list[int] = []
    try:
        with tempfile.TemporaryFile() as held_out, tempfile.TemporaryFile() as held_err:
            for fd in (1, 2):
                kept.append(os.dup(fd))
            proc = subprocess.Popen(
                [sys.executable, "-m", "launchprof.worker", "--wait", *map(str, kept)],
                stdin=subprocess.PIPE,
                stdout=held_out,
                stderr=held_err,
                pass_fds=kept,
                env=worker_env(),
                start_new_session=True,  # as run_worker's: a stop reaches the children it starts
            )
    except OSError:
        return  # the CLI starts its worker itself, as it would have
    finally:
        for fd in kept:
            os.close(fd)
    _waiting.append(proc)
    atexit.register(discard)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # run_worker's own handlers take over later
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _stopped)


def _stopped(signum: int, frame: object) -> None:
    """A stop before the worker was told: the waiting worker is killed first, then the CLI
    ends by the signal's own default action. Left to that action alone, the CLI would leave
    the worker to finish its import, holding the CLI's output streams."""
    discard()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def take() -> subprocess.Popen[bytes] | None:
    """The waiting worker, still alive, for the analysis about to run; None when there is none.
    A stop still kills it (``_stopped``) until :func:`handed_over` says that run_worker's own
    stop handling is in place: between the two, a SIGTERM would otherwise end the CLI and
    leave the worker, in its own session, to run the script alone."""
    while _waiting:
        proc = _waiting[-1]
        if proc.poll() is None:
            return proc
        _waiting.pop()
    return None


def handed_over(proc: subprocess.Popen[bytes] | None) -> None:
    """The caller of :func:`take` now stops ``proc`` itself: it is no longer killed at exit."""
    if proc is not None and proc in _waiting:
        _waiting.remove(proc)


def send(proc: subprocess.Popen[bytes], config_path: Path, output: str, log_path: Path | None) -> bool:
    """Start the measurement: ``output`` is ``terminal``, ``stderr`` (a report goes to
    standard output) or ``log`` (into ``log_path``), as run_worker would have wired it.
    False when the worker died since it was taken (its pipe is closed): the caller reaps it
    and starts a worker itself."""
    assert proc.stdin is not None
    line = json.dumps({"config": str(config_path), "output": output, "log": str(log_path) if log_path else None})
    try:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.close()
    except OSError:
        return False
    return True


def discard() -> None:
    """Kill a waiting worker nobody took: it has imported torch and nothing more."""
    while _waiting:
        kill(_waiting.pop())


def kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill a worker that was never told its config, and reap it."""
    if proc.poll() is not None:  # reaped: its process group id may be another's by now
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
