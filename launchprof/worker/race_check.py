"""stream-race: one extra eager call of the step under PyTorch's CUDA sanitizer.

The sanitizer (``torch.cuda._sanitizer``) sees every aten op with the tensors it reads
and writes, and every stream and event operation, and flags two accesses from different
streams, one a write, with nothing ordering them. It raises at the first racy op, which
would abort the user's call, so its kernel-launch handler is wrapped here to collect the
errors and carry on. The same handler gives each op's reads and writes: the data
dependencies between the step's ops, which a graph captured from one stream (a chain)
cannot show, and which the concurrency advice needs.

This runs once (``TargetRun.final_checks``), where the script is stopped once measured
(worker/early_stop.py) or after it has ended (``--run-to-end``): importing the sanitizer
switches on PyTorch's GPU trace hooks, which cannot be switched off again and slow every
later CUDA op of the process (a 2-op step went from 28.6 to 73.1 µs), so neither a
measurement nor the script's own remaining calls may follow it. The dispatch
mode is left at once, and the callbacks it registered are removed. The call runs on a snapshot
that is restored afterwards, as the timing bursts do (worker/plan_bursts.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.capture_events import Race, RaceAccess, RaceCheckEvent, RaceOp
from launchprof.worker.frames import user_site
from launchprof.worker.dispatch_modes import without_dynamo_import
from launchprof.model.findings import RestoredAfter
from launchprof.worker.plan_bursts import UserState, silenced

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun

MAX_OPS = 4000  # ops written out for the concurrency advice; races are always written
MAX_RACES = 20


class AccessLog:
    """Each op's stream and data dependencies (read after write, write after read or
    write) on earlier ops of the same call, and the races the sanitizer found."""

    def __init__(self) -> None:
        self.ops: list[RaceOp] = []
        self.races: list[Race] = []
        self._writer: dict[int, int] = {}
        self._readers: dict[int, list[int]] = {}
        self.backward_ops = 0  # ops that ran inside autograd's backward

    def launch(self, stream: int, read_only: set[int], read_write: set[int], operator: Any) -> None:
        if not read_only and not read_write:
            return  # a view or a metadata-only op: no memory touched, no kernel
        index = len(self.ops)
        deps: set[int] = set()
        for ptr in read_only:
            if ptr in self._writer:
                deps.add(self._writer[ptr])
            self._readers.setdefault(ptr, []).append(index)
        for ptr in read_write:
            if ptr in self._writer:
                deps.add(self._writer[ptr])
            deps.update(self._readers.pop(ptr, []))
            self._writer[ptr] = index
        deps.discard(index)
        self.ops.append(RaceOp(op=_op_name(operator), stream=int(stream), deps=sorted(deps)))
        if in_backward():
            self.backward_ops += 1

    def add_errors(self, errors: list[Any]) -> None:
        for err in errors:
            current, previous = getattr(err, "current_access", None), getattr(err, "previous_access", None)
            if current is None or previous is None or len(self.races) >= MAX_RACES:
                continue
            race = Race(data_ptr=int(getattr(err, "data_ptr", 0)), access=access_of(current), previous=access_of(previous))
            key = (_site_key(race.access), _site_key(race.previous))
            if all((_site_key(r.access), _site_key(r.previous)) != key for r in self.races):
                self.races.append(race)


def in_backward() -> bool:
    """Whether the op being dispatched runs inside autograd's backward (a node is executing)."""
    current = getattr(torch._C, "_current_autograd_node", None)
    return current is not None and current() is not None


def _op_name(operator: Any) -> str:
    return str(getattr(operator, "name", operator))


def _site_key(access: RaceAccess) -> tuple[Any, ...]:
    return (access.file, access.line, access.type)


def access_of(access: Any) -> RaceAccess:
    """One sanitizer Access as event fields: read or write, stream, op, the user's line."""
    frames = [(f.filename, f.lineno or 0, f.name) for f in access.stack_trace]
    site = user_site(frames)
    kind = "write" if "WRITE" in str(getattr(access.type, "name", access.type)).upper() else "read"
    return RaceAccess(
        type=kind,
        stream=int(access.stream),
        op=_op_name(access.operator),
        file=site.file if site else None,
        line=site.line if site else None,
        code=site.code if site else None,
        function=site.function if site else None,
    )


def _registries() -> list[Any]:
    import torch.cuda._gpu_trace as gpu_trace

    return [v for v in vars(gpu_trace).values() if hasattr(v, "callback_list")]


def _drop_callbacks(handlers: list[Any]) -> None:
    """Remove the callbacks bound to these handlers: GPU trace events then call nothing."""
    for registry in _registries():
        registry.callback_list[:] = [cb for cb in registry.callback_list if getattr(cb, "__self__", None) not in handlers]


def sanitized(fn: Callable[[], Any], log: AccessLog) -> Any:
    """Run ``fn`` once under a fresh sanitizer mode that records into ``log``."""
    already = "torch.cuda._sanitizer" in sys.modules
    from torch.cuda import _sanitizer as csan

    mode = csan.CUDASanitizerDispatchMode()
    handler = mode.event_handler
    original = handler._handle_kernel_launch

    def launch(stream: Any, read_only: Any, read_write: Any, *rest: Any) -> list[Any]:
        errors = original(stream, read_only, read_write, *rest)
        log.launch(stream, set(read_only), set(read_write), rest[1] if len(rest) > 1 else "?")
        log.add_errors(errors)
        return []  # collected, not raised: the user's call runs to its end

    handler._handle_kernel_launch = launch
    handlers = [handler]
    if not already and not csan.cuda_sanitizer.enabled:
        handlers.append(csan.cuda_sanitizer.dispatch.event_handler)  # registered by the import
    try:
        with without_dynamo_import(type(mode)), mode:
            return fn()
    finally:
        _drop_callbacks(handlers)


def check_streams(run: TargetRun, args: tuple, kwargs: dict) -> None:
    """The extra call on one recorded argument set, and its ``race-check`` event; any
    failure is a note, never a crash."""
    try:
        state = UserState(run, [(args, kwargs)], after=RestoredAfter.STREAM_CHECK)
    except Exception as exc:
        run.events.write(RaceCheckEvent(status="failed", reason=f"{type(exc).__name__}: {exc}"[:300]))
        return
    log = AccessLog()
    status, reason = "ok", None
    origin = torch.cuda.current_stream().cuda_stream
    try:
        with silenced():
            sanitized(lambda: run.fn(*args, **kwargs), log)
    except ImportError as exc:
        status, reason = "unavailable", f"this torch has no CUDA sanitizer ({exc})"
    except Exception as exc:
        status, reason = "failed", f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        state.restore()
    run.events.write(
        RaceCheckEvent(
            status=status, reason=reason, origin_stream=int(origin), races=log.races, ops=log.ops[:MAX_OPS], ops_total=len(log.ops),
            backward_ops=log.backward_ops,
        )
    )
