"""A waiting worker's output, held until the CLI says where the script's output goes.

A worker started before the CLI parsed its options (launchprof/commands/warm_worker.py)
imports torch meanwhile, and an import or the interpreter's start can print (a warning, a
site hook). That output is the script's as much as anything it prints later, so it must go
where ``--hide-output``, ``--quiet`` or a report on standard output send the script's: the
CLI starts the worker with two anonymous files as its standard output and error, and
passes its own two along. Once told, the worker writes out what was held and puts the
destination in their place.
"""

from __future__ import annotations

import os
import sys

OUT, ERR = 1, 2


def release(kept_out: int, kept_err: int, output: str, log: str | None) -> None:
    """Send what was held, then everything after it, to ``output``: ``terminal`` (each stream
    where the CLI's went: ``kept_out`` and ``kept_err``), ``stderr`` (both to the CLI's
    standard error: a report is on its standard output) or ``log`` (both into the file
    ``log``). Standard input becomes empty, as a worker started with its config has it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    if output == "log" and log:
        logged: int | None = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        targets = (logged, logged)
    else:
        logged = None
        targets = (kept_err, kept_err) if output == "stderr" else (kept_out, kept_err)
    for held, target in zip((OUT, ERR), targets, strict=True):
        _write_all(target, _read_all(held))
    os.dup2(targets[0], OUT)
    os.dup2(targets[1], ERR)
    for fd in {kept_out, kept_err, *([logged] if logged is not None else [])}:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _read_all(fd: int) -> bytes:
    """The held file behind ``fd``, from its start (it was opened for reading and writing)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except OSError:  # a closed terminal or pipe: the script's own writes would fail the same way
            return
