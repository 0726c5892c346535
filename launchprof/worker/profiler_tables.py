"""The profiler's tables, written straight from its in-memory results.

``export_chrome_trace`` writes every CPU op, metadata row and flow arrow, and the analysis
then parses it all back: seconds per run. The analysis reads only complete events of a few
categories, so this writes just those, gzipped, from ``kineto_results.events()``. If this
torch's event objects differ, the full export (gzipped too) is the fallback.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Categories launchprof.common.trace_tables reads; GPU rows carry a stream, all a correlation id.
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
# Host calls that launch GPU work (cuBLAS launches through the driver API, not the runtime).
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})
HOST_CATEGORIES = RUNTIME_CATEGORIES | {"user_annotation"}
CATEGORIES = GPU_CATEGORIES | HOST_CATEGORIES


# CUPTI synchronisation records sit on the GPU timeline too; they are no GPU work.
_GPU_SYNC_NAMES = frozenset({"Context Sync", "Stream Sync", "Event Sync", "Stream Wait Event"})


def _category(event: Any) -> str | None:
    """The Chrome-trace category of one kineto event, or None for rows the analysis ignores.

    Newer torch names it (``activity_type()``); torch 2.11 has no such
    accessor, so the category is read from the device type, the name and the annotation
    flag, the same facts the Chrome export uses."""
    if hasattr(event, "activity_type"):
        kind = event.activity_type()
        if not isinstance(kind, str):  # an enum number: unknown mapping, use the fallback
            raise TypeError(f"activity_type() returned {type(kind).__name__}, not a name")
        if kind == "user_annotation" or (kind == "cpu_op" and event.is_user_annotation()):
            return "user_annotation"
        return kind if kind in CATEGORIES else None
    gpu = on_gpu(event)
    name = event.name()
    if event.is_user_annotation():
        return None if gpu else "user_annotation"
    if gpu:
        if name in _GPU_SYNC_NAMES:
            return None
        if name.startswith("Memcpy"):
            return "gpu_memcpy"
        if name.startswith("Memset"):
            return "gpu_memset"
        return "kernel"
    if name.startswith("cu") and "::" not in name and int(event.correlation_id()) > 0:
        return "cuda_runtime" if name.startswith("cuda") else "cuda_driver"
    return None


def on_gpu(event: Any) -> bool:
    """A kineto event that ran on the device (kernel, copy, fill), not on the host.

    Compared as torch's enum where it is one: ``str()`` of the enum was most of the cost of
    building a table's rows on torch 2.11 (about 0.5 s per 100k events)."""
    kind = event.device_type()
    cuda = _cuda_device_type()
    if cuda is not None and type(kind) is type(cuda):
        return bool(kind == cuda)
    return str(kind).endswith("CUDA")


@functools.cache
def _cuda_device_type() -> Any:
    try:
        import torch

        return torch.autograd.DeviceType.CUDA
    except (ImportError, AttributeError):
        return None


def chrome_rows(events: Iterable[Any], base_ns: int, pid: int = 0) -> list[dict[str, Any]]:
    """Complete ("X") Chrome-trace rows for the categories the analysis reads."""
    rows = []
    for e in events:
        cat = _category(e)
        if cat is None:
            continue
        args: dict[str, Any] = {"correlation": int(e.correlation_id())}
        if cat in GPU_CATEGORIES:
            args["stream"] = int(e.device_resource_id())
            args["device"] = int(e.device_index())
            tid: int = args["stream"]
        else:
            tid = int(e.start_thread_id())
        rows.append(
            {
                "ph": "X",
                "cat": cat,
                "name": e.name(),
                "pid": int(e.device_index()) if cat in GPU_CATEGORIES else pid,
                "tid": tid,
                "ts": (int(e.start_ns()) - base_ns) / 1e3,
                "dur": int(e.duration_ns()) / 1e3,
                "args": args,
            }
        )
    return rows


@dataclass
class Timeline:
    """The rows :func:`write_table` writes, ``ts`` in µs after ``base_ns``: kept for a second
    reader of the same profile (the whole-script candidate ranking), since on torch 2.11
    reading the events costs seconds on a long script."""

    rows: list[dict[str, Any]]
    base_ns: int


def read_timeline(prof: Any) -> Timeline | None:
    """The stopped profile's table rows; None if this torch's event objects differ."""
    try:
        events = prof.profiler.kineto_results.events()
        base = min((int(e.start_ns()) for e in events), default=0)
        return Timeline(chrome_rows(events, base), base)
    except Exception:
        return None


def write_table(prof: Any, run_dir: Path, what: str, table: Timeline | None = None) -> str:
    """Write ``trace-WHAT.json.gz`` into the run folder; returns its path relative to it.
    ``table``: the rows when already read (:func:`read_timeline`)."""
    name = f"trace-{what}.json.gz"
    path = Path(run_dir) / name
    try:
        table = table if table is not None else read_timeline(prof)
        if table is None:
            raise TypeError("this torch's kineto events are not read")
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=3) as fh:
            json.dump({"traceEvents": table.rows, "displayTimeUnit": "ms", "launchprof": {"source": "kineto_results"}}, fh, separators=(",", ":"))
    except Exception:
        plain = Path(run_dir) / f"trace-{what}.json"
        prof.export_chrome_trace(str(plain))
        with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=3) as dst:
            shutil.copyfileobj(src, dst)
        plain.unlink()
    return name


CYCLE_WARNING = "Warning: Profiler clears events at the end of each cycle"


def new_profile(with_stack: bool = False, activities: list[Any] | None = None) -> Any:
    """A ``torch.profiler.profile`` (CPU and CUDA activity unless told), as launchprof's sessions use.

    torch 2.11 warned "Profiler clears events at the end of each cycle" into
    the user's output for every session without a schedule (pytorch/pytorch#180387). The
    session's start silences that one warning; ``acc_events=True``, which would too, makes
    torch post-process every event at each stop, the cost write_table avoids."""
    from torch.profiler import ProfilerActivity, profile

    chosen = activities if activities is not None else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    return _quiet(profile)(activities=chosen, with_stack=with_stack)


@functools.cache
def _quiet(base: type) -> type:
    """``base`` whose start does not print the cycle warning."""

    class QuietProfile(base):  # type: ignore[misc, valid-type]
        def start(self) -> None:
            with warnings.catch_warnings(), _inductor_unasked():
                warnings.filterwarnings("ignore", message=CYCLE_WARNING)
                super().start()

    return QuietProfile


@contextlib.contextmanager
def _inductor_unasked() -> Iterator[None]:
    """A session's start asks ``hasattr(torch, "_inductor")`` only to read inductor's cudagraphs
    setting, and the question imports torch._inductor (with torch._dynamo, sympy and triton):
    5.7 s of a process's first session on the H200, against 0.03 s for the session itself
    (benchmarks/profiler-init-probe). Where torch._inductor is not imported, nothing has set
    that setting, so for the length of the start the name is answered as absent."""
    import torch

    lazy = torch.__dict__.get("__getattr__")
    if "torch._inductor" in sys.modules or not callable(lazy):
        yield
        return

    def unasked(name: str) -> Any:
        if name == "_inductor":
            raise AttributeError(name)
        return lazy(name)

    torch.__getattr__ = unasked  # type: ignore[attr-defined]
    try:
        yield
    finally:
        torch.__getattr__ = lazy  # type: ignore[attr-defined]
