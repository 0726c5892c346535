"""The plainest measurement of a step under torch.compile, to check --compare compile against
(used by compile_step.py and compile_frozen.py, in the same process, after the script ran):

- each mode compiled afresh (torch._dynamo.reset()), twice, warmed up over the calls;
- steady calls timed between two synchronisations, cycling through the calls, median of 60;
- kernels per call from torch.profiler's own events (FunctionEvent.device_type CUDA, copies,
  memsets and sync records left out), one steady call.
Only torch is used: no launchprof module.
"""

from __future__ import annotations

import inspect
import json
import statistics
from collections.abc import Callable
from typing import Any

import torch
from direct_loop import median_us

NOT_KERNELS = ("Memcpy", "Memset", "Context Sync", "Stream Sync", "Event Sync", "Stream Wait Event")


def kernels(fn: Callable[[], Any]) -> int:
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    cuda = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(1 for e in cuda if not e.name.startswith(NOT_KERNELS))


def measure(fn: Callable[..., Any], sets: list[tuple[tuple, dict]], reset_state: Callable[[], None], rounds: int = 2) -> dict[str, Any]:
    """Each mode compiled afresh ``rounds`` times, the modes in turn: ``step_us`` is the median
    of the rounds' medians, ``rounds_us`` each round's. Two fresh compiles of the same step
    need not time alike: on the H200 (2026-12-02) the frozen step's two modes, which both ran
    the same uncaptured code (cudagraphs skipped), read 90.4 and 128.9 µs in one process."""
    # Under launchprof the script's `RAW = step` line runs after the hook has rebound `step`
    # to its stand-in (functools.wraps of a TargetRun): compile the function itself, as the
    # worker does, not launchprof's wrapper around it.
    fn = inspect.unwrap(fn)
    found: dict[str, list[float]] = {"reduce-overhead": [], "default": []}
    counted: dict[str, int] = {}
    for _ in range(rounds):
        for mode in found:
            torch._dynamo.reset()
            compiled = torch.compile(fn, mode=mode)
            calls = [(lambda a=a, k=k: compiled(*a, **k)) for a, k in sets]
            for _ in range(4):
                for call in calls:
                    call()
            found[mode].append(median_us(*calls))
            counted.setdefault(mode, kernels(calls[0]))
            reset_state()
    torch._dynamo.reset()
    return {mode: {"step_us": statistics.median(values), "rounds_us": values, "kernels": counted[mode]} for mode, values in found.items()}


def write(path: str, data: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
