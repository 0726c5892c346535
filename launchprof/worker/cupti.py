"""CUPTI teardown after each profiler session of a target's plan.

Kineto leaves CUPTI subscribed when a ``torch.profiler`` session ends unless
``TEARDOWN_CUPTI=1`` (pytorch/pytorch#144455). Its callbacks then slow every later launch
and synchronisation of the process, and the plan's timed bursts run after its profiled
calls: they timed launchprof's profiler as well as the user's step. Measured on an H200
(one run each), teardown brought analyze's eager step from 1.3-2.2x a direct timing loop to within
2-7% of it on four of seven samples; two stay off (docs/timing-truth.md).

Kineto reads the variable at every profiler stop, so setting it before the plan's first
profiler is enough. A value the user set is kept (and a value other than 1 is noted).
The compile comparison asks for it too, since it may profile before the plan does. Before
CUDA 12.6, re-initialising CUPTI
after a teardown crashed in processes that use CUDA graphs (the reason torch's own
inductor turns teardown off), so there it is left off and the run says its small steps
may read high. The whole-script overview does not set it when it runs alone (nothing is
timed after it; unchecked on a GPU). When a decorated target takes over, the overview's
profiler stops with a teardown too: a session that ended subscribed, followed by one that
ends with a teardown, recorded no kernels at all (:func:`lost_device_activity`).
"""

from __future__ import annotations

import os
from typing import Any

from launchprof.worker.profiler_tables import on_gpu

TEARDOWN_CUPTI = "TEARDOWN_CUPTI"
# CUDA graphs survive CUPTI re-initialisation from this CUDA version on (pytorch/pytorch#146604).
SAFE_FROM = (12, 6)
OLD_CUDA_NOTE = (
    "CUPTI stays subscribed after launchprof's profiled calls on CUDA {cuda} (teardown crashes with CUDA graphs "
    "before 12.6), so the timed steps include its callbacks: small steps may read high"
)
OFF_NOTE = (
    "TEARDOWN_CUPTI={value} in this process keeps CUPTI subscribed after launchprof's profiled calls, so the "
    "timed steps include its callbacks: small steps may read high"
)


def cuda_version(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of ``torch.version.cuda`` ("12.4", "13.0"); None if unknown."""
    try:
        major, minor = str(text).split(".")[:2]
        return int(major), int(minor)
    except (TypeError, ValueError):
        return None


def tear_down_after_profiling(cuda: str | None = None) -> str | None:
    """Ask kineto to release CUPTI when each profiler session ends (unless the user set the
    variable: their value is kept). Returns a note for the run whenever teardown is not in
    force (a user's or torch's own "0", or CUDA before 12.6): the timed steps then include
    CUPTI's callbacks."""
    if TEARDOWN_CUPTI not in os.environ:
        if cuda is None:
            import torch

            cuda = torch.version.cuda
        version = cuda_version(cuda)
        if version is not None and version < SAFE_FROM:
            return OLD_CUDA_NOTE.format(cuda=cuda)
        os.environ[TEARDOWN_CUPTI] = "1"
    if os.environ[TEARDOWN_CUPTI] != "1":
        return OFF_NOTE.format(value=os.environ[TEARDOWN_CUPTI])
    return None


def lost_device_activity(prof: Any) -> bool:
    """True when a finished profiler session under teardown recorded no GPU activity at all.

    Torch 2.11, CUDA 13.0 (one process per case, 3 calls of a 2-op step profiled per
    session): the first session that ends with a teardown after one that ended without
    (the caller's own torch.profiler before ``launchprof.analyze``, a script's before its
    target) recorded no kernel; the sessions after it recorded all 6. So does the first
    real session after an empty one in a fresh process, which is why launchprof does not
    simply open an empty session first. Nothing tells beforehand whether a session ran, so
    the plan profiles its calls once more when this is true; a step with no GPU work pays
    one more short session for it.
    """
    if os.environ.get(TEARDOWN_CUPTI) != "1":
        return False
    try:
        events = prof.profiler.kineto_results.events()
    except Exception:  # no results to judge: keep the trace as it is
        return False
    return not any(on_gpu(e) for e in events)
