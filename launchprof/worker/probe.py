"""One eager call, watched closely: sync sites, host side effects, foreign RNG, stream forks.

Capture turns every synchronising call into the same ``cudaErrorStreamCaptureInvalidated``
that names no line. So before capture, one eager call runs under
``torch.cuda.set_sync_debug_mode("warn")`` (every sync warns), a dispatch mode that knows
which aten op is running, and a Python profile hook that sees prints, logging, appends to
outside containers, numpy/``random`` draws and stream fork/join calls at their user frame.
It costs one slow call and finds every site in one run, not only the first.

Host side effects are writes to state that outlives the call, told by object identity
(:mod:`launchprof.worker.probe_effects`); a trace hook follows the lines of library
functions that can write, so a branch a library never took on this call is not reported.
A finding inside an installed package is filed at the user's line that called into it.
"""

from __future__ import annotations

import inspect
import logging
import random
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from launchprof.events.record import Site as EventSite
from launchprof.events.observation_events import ProbeEntry, ProbeEvent
from launchprof.worker.frames import Site, is_runtime, placed_frame_site, placed_stack_site
from launchprof.worker.dispatch_modes import without_dynamo_import
from launchprof.worker.probe_effects import Effects
from launchprof.worker.probe_objects import CallObjects
from launchprof.worker.probe_scan import LOG_METHODS

_APPENDS = {"append", "extend", "insert", "add", "update", "appendleft", "setdefault", "__setitem__"}


@dataclass
class ProbeResult:
    syncs: list[dict[str, Any]] = field(default_factory=list)
    effects: list[dict[str, Any]] = field(default_factory=list)
    rng: list[dict[str, Any]] = field(default_factory=list)
    streams: list[dict[str, Any]] = field(default_factory=list)
    user_functions: list[dict[str, Any]] = field(default_factory=list)
    # Where the step writes Python state, so launchprof's extra calls can be undone.
    writes: list[tuple[Any, str]] = field(default_factory=list)
    containers: list[Any] = field(default_factory=list)

    def event(self, index: int | None, max_functions: int) -> ProbeEvent:
        """The ``probe`` event of these findings (each entry's fields as found)."""
        return ProbeEvent(
            index=index,
            syncs=[ProbeEntry(**e) for e in self.syncs],
            effects=[ProbeEntry(**e) for e in self.effects],
            rng=[ProbeEntry(**e) for e in self.rng],
            streams=[ProbeEntry(**e) for e in self.streams],
            functions=[EventSite(**f) for f in self.user_functions[:max_functions]],
        )


class _OpTracker(TorchDispatchMode):
    """Remembers the aten op in flight, and flags ops fed by a non-default generator."""

    def __init__(self, result: ProbeResult) -> None:
        super().__init__()
        self.current: str | None = None
        self.detail: dict[str, Any] = {}
        # C++ warnings reach Python when the op returns, after ``current`` is reset:
        # the most recently finished op is the one that synchronised.
        self.last: str | None = None
        self.last_detail: dict[str, Any] = {}
        self.result = result

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        name = func.__name__ if hasattr(func, "__name__") else str(func)
        previous, previous_detail = self.current, self.detail
        self.current = str(func.overloadpacket.__name__) if hasattr(func, "overloadpacket") else name
        self.detail = _copy_detail(self.current, args, kwargs)
        gen = kwargs.get("generator")
        if isinstance(gen, torch.Generator):
            default = torch.cuda.default_generators[gen.device.index or 0] if gen.device.type == "cuda" else torch.default_generator
            if gen is not default:
                site = placed_stack_site(2)
                if site:
                    self.result.rng.append({"what": f"torch.Generator passed to {self.current}", **site.as_dict()})
        try:
            return func(*args, **kwargs)
        finally:
            self.last, self.last_detail = self.current, self.detail
            self.current, self.detail = previous, previous_detail


def _copy_detail(op: str, args: tuple, kwargs: dict) -> dict[str, Any]:
    """For copies: which direction, and whether the host side is pinned."""
    if op not in ("copy_", "_to_copy", "to", "_copy_from", "_copy_from_and_resize"):
        return {}
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    detail: dict[str, Any] = {"devices": [str(t.device) for t in tensors]}
    if op == "_to_copy" and tensors:
        dst = kwargs.get("device")
        detail["devices"] = [str(tensors[0].device), str(dst) if dst is not None else str(tensors[0].device)]
    elif op == "copy_" and len(tensors) >= 2:
        detail["devices"] = [str(tensors[1].device), str(tensors[0].device)]  # src, dst
    host = [t for t in tensors if t.device.type == "cpu"]
    detail["pinned"] = bool(host) and all(t.is_pinned() for t in host)
    return detail


class _Watcher:
    """The sys.setprofile hook. Kept small: it runs on every Python call of the probe call."""

    def __init__(self, result: ProbeResult, origin: torch.cuda.Stream | None) -> None:
        self.result = result
        self.origin = origin
        self.events_streams: dict[int, int] = {}
        self.effects = Effects()
        self.sync_codes = _sync_codes()
        self.stream_codes = _stream_codes()
        self.random_file = inspect.getsourcefile(random)
        self._runtime: dict[str, bool] = {}

    def runtime(self, file: str) -> bool:
        """torch's, launchprof's or the stdlib's: code the probe does not look into."""
        got = self._runtime.get(file)
        if got is None:
            got = self._runtime[file] = is_runtime(file)
        return got

    def trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        """The sys.settrace hook, for its call events alone: a library function's call gets a
        line trace of its own (which of its writes ran); every other frame runs untraced."""
        if event != "call":
            return None
        try:
            return None if self.runtime(frame.f_code.co_filename) else self.effects.on_call(frame)
        except Exception:  # never let the watcher break the user's call
            return None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        try:
            if event == "call":
                self._on_call(frame)
            elif event == "c_call":
                self._on_c_call(frame, arg)
        except Exception:  # never let the watcher break the user's call
            pass

    def _on_call(self, frame: FrameType) -> None:
        code = frame.f_code
        caller = frame.f_back
        outside = caller is not None and not self.runtime(caller.f_code.co_filename)
        if code in self.sync_codes:
            site = placed_frame_site(caller) if outside else None
            if site:
                self.result.syncs.append({"op": self.sync_codes[code], "source": "python", **site.as_dict()})
            return
        if code in self.stream_codes and caller is not None:
            # Event.record is often called by torch itself (Stream.record_event): keep it
            # whatever the caller, so a later wait on that event knows its stream.
            if outside or self.stream_codes[code] == "record":
                self._on_stream(self.stream_codes[code], frame, caller)
            return
        if code.co_filename == self.random_file:
            site = placed_frame_site(caller) if outside else None
            if site:
                self.result.rng.append({"what": f"random.{code.co_name}", **site.as_dict()})
            return
        if code.co_name in LOG_METHODS and isinstance(frame.f_locals.get("self"), logging.Logger):
            site = placed_frame_site(caller) if outside else None
            if site:
                self.result.effects.append({"what": f"logging .{code.co_name}()", **site.as_dict()})

    def _on_c_call(self, frame: FrameType, fn: Any) -> None:
        if self.runtime(frame.f_code.co_filename):
            return
        name = getattr(fn, "__name__", "")
        owner = getattr(fn, "__self__", None)
        if fn is print:
            site = placed_frame_site(frame)
            if site:
                self.result.effects.append({"what": "print()", **site.as_dict()})
        elif owner is not None and type(owner).__module__.startswith("numpy.random"):
            site = placed_frame_site(frame)
            if site:
                self.result.rng.append({"what": f"numpy.random {name}()", **site.as_dict()})
        elif isinstance(owner, random.Random):
            site = placed_frame_site(frame)
            if site:
                self.result.rng.append({"what": f"random.{name}()", **site.as_dict()})
        elif name in _APPENDS and isinstance(owner, (list, dict, set)):
            self.effects.on_append(owner, name, frame, lambda: placed_frame_site(frame))

    def _on_stream(self, op: str, frame: FrameType, caller: FrameType) -> None:
        loc = frame.f_locals
        site = placed_frame_site(caller)
        if site is None:
            site = Site(file="", line=0, code="", function="")
        record: dict[str, Any] = {"op": op, **site.as_dict()}
        if op == "wait_stream":
            record["waiter"] = _sid(loc.get("self"))
            record["waited"] = _sid(loc.get("stream"))
        elif op == "wait_event":
            record["waiter"] = _sid(loc.get("self"))
            record["event"] = id(loc.get("event"))
        elif op == "record":
            stream = loc.get("stream") or torch.cuda.current_stream()
            record["event"] = id(loc.get("self"))
            record["stream"] = _sid(stream)
        elif op == "use_stream":
            record["stream"] = _sid(loc.get("stream"))
        record["origin"] = _sid(self.origin)
        self.result.streams.append(record)


def _sid(stream: Any) -> int | None:
    return int(stream.cuda_stream) if stream is not None and hasattr(stream, "cuda_stream") else None


def _sync_codes() -> dict[CodeType, str]:
    codes: dict[CodeType, str] = {}
    for fn, name in (
        (torch.cuda.synchronize, "torch.cuda.synchronize()"),
        (torch.cuda.Stream.synchronize, "Stream.synchronize()"),
        (torch.cuda.Event.synchronize, "Event.synchronize()"),
        (torch.cuda.Stream.query, "Stream.query()"),
        (torch.cuda.Event.query, "Event.query()"),
    ):
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes[code] = name
    return codes


def _stream_codes() -> dict[CodeType, str]:
    codes: dict[CodeType, str] = {}
    for fn, name in (
        (torch.cuda.Stream.wait_stream, "wait_stream"),
        (torch.cuda.Stream.wait_event, "wait_event"),
        (torch.cuda.Event.record, "record"),
        (torch.cuda.StreamContext.__init__, "use_stream"),
    ):
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes[code] = name
    return codes


_SYNC_OPS = {
    "_local_scalar_dense": "host read of a tensor value (.item(), int(), float(), bool(), `if tensor`)",
    "item": "host read of a tensor value (.item())",
    "is_nonzero": "`if tensor` / bool(tensor)",
    "nonzero": "nonzero() (also boolean-mask indexing)",
    "nonzero_static": "nonzero_static()",
    "masked_select": "masked_select / boolean-mask indexing",
    "unique": "unique()",
    "index": "boolean-mask indexing",
    "repeat_interleave": "repeat_interleave with tensor repeats",
}


def classify_sync(op: str | None, detail: dict[str, Any], code: str) -> tuple[str, str]:
    """(hazard kind, what) for one sync warning."""
    devices = detail.get("devices") or []
    if op in ("copy_", "_to_copy", "to", "_copy_from", "_copy_from_and_resize") and len(devices) >= 2:
        src, dst = devices[0], devices[-1]
        if src.startswith("cpu") and dst.startswith("cuda"):
            return "pageable-copy", "host-to-device copy from pageable memory"
        if src.startswith("cuda") and dst.startswith("cpu"):
            return "hidden-sync", "device-to-host copy (.cpu(), .tolist(), .numpy(), print)"
    if op in _SYNC_OPS:
        return "hidden-sync", _SYNC_OPS[op]
    return "hidden-sync", f"synchronising op {op}" if op else "synchronising call"


def sync_entry(message: str, op: str | None, detail: dict[str, Any]) -> dict[str, Any] | None:
    """One sync-debug warning as a finding at the user's line; None when no user frame is
    on the stack (a sync inside torch or launchprof is not the user's)."""
    site = placed_stack_site(3)
    if site is None:
        return None
    kind, what = classify_sync(op, detail, site.code)
    return {"op": op, "what": what, "kind": kind, "message": message.splitlines()[0][:200], "source": "sync-debug", **site.as_dict()}


def probe_call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Any, ProbeResult]:
    """Run ``fn`` once eagerly under every watcher; return its result and the findings."""
    result = ProbeResult()
    tracker = _OpTracker(result)
    cuda = torch.cuda.is_available()
    watcher = _Watcher(result, torch.cuda.current_stream() if cuda else None)

    def on_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        text = str(message)
        if "synchroniz" not in text:
            return
        if not inside[0]:
            return  # launchprof's own bookkeeping around the call, not the user's code
        op = tracker.current or tracker.last
        entry = sync_entry(text, op, tracker.detail if tracker.current else tracker.last_detail)
        if entry is not None:
            result.syncs.append(entry)

    inside = [False]
    objects = CallObjects()
    previous_mode = torch.cuda.get_sync_debug_mode() if cuda else 0
    previous_profile, previous_trace = sys.getprofile(), sys.gettrace()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        old_show = warnings.showwarning
        warnings.showwarning = on_warning
        try:
            if cuda:
                torch.cuda.set_sync_debug_mode("warn")
            objects.begin()
            sys.setprofile(watcher)
            sys.settrace(watcher.trace)
            with without_dynamo_import(_OpTracker), tracker:
                inside[0] = True
                try:
                    out = fn(*args, **kwargs)
                finally:
                    inside[0] = False
        finally:
            sys.settrace(previous_trace)
            sys.setprofile(previous_profile)
            objects.end()
            if cuda:
                torch.cuda.set_sync_debug_mode(previous_mode)
            warnings.showwarning = old_show
    found = watcher.effects.findings(objects)
    result.effects.extend(found.effects)
    result.rng.extend(found.draws)
    result.writes.extend(found.writes)
    result.containers.extend(found.containers)
    result.user_functions = [
        {"file": c.co_filename, "line": c.co_firstlineno, "function": c.co_qualname if hasattr(c, "co_qualname") else c.co_name}
        for c, run in watcher.effects.runs.items()
        if not run.library
    ]
    return out, result


def site_dict(site: Site | None) -> dict[str, Any]:
    return site.as_dict() if site else {}
