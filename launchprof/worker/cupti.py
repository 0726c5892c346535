"""CUPTI teardown after each profiler session of a target's plan.

Kineto leaves CUPTI subscribed when a ``torch.profiler`` session ends unless
``TEARDOWN_CUPTI=1`` (pytorch/pytorch#144455). Its callbacks then slow every later launch
and synchronisation of the process, and the plan's timed bursts run after its profiled
calls: they timed launchprof's profiler as well as the user's step. On the H200 (one run
each), teardown brought analyze's eager step from 1.3-2.2x a direct timing loop to within
2-7% of it on four of seven samples; two stay off (docs/timing-truth.md).

Kineto reads the variable at every profiler stop, so setting it before the plan's first
profiler is enough. A value the user set is kept. Before CUDA 12.6, re-initialising CUPTI
after a teardown crashed in processes that use CUDA graphs (the reason torch's own
inductor turns teardown off), so there it is left off and the run says its small steps
may read high. The whole-script overview (no target) does not set it: nothing is timed
after its profiler, and teardown there has not been checked on a GPU.
"""

from __future__ import annotations

import os

TEARDOWN_CUPTI = "TEARDOWN_CUPTI"
# CUDA graphs survive CUPTI re-initialisation from this CUDA version on (pytorch/pytorch#146604).
SAFE_FROM = (12, 6)
OLD_CUDA_NOTE = (
    "CUPTI stays subscribed after launchprof's profiled calls on CUDA {cuda} (teardown crashes with CUDA graphs "
    "before 12.6), so the timed steps include its callbacks: small steps may read high"
)


def cuda_version(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of ``torch.version.cuda`` ("12.4", "13.0"); None if unknown."""
    try:
        major, minor = str(text).split(".")[:2]
        return int(major), int(minor)
    except (TypeError, ValueError):
        return None


def tear_down_after_profiling(cuda: str | None = None) -> str | None:
    """Ask kineto to release CUPTI when each profiler session ends. Returns a note for the
    run when the timing cannot be protected (CUDA before 12.6), else None. A value the user
    set is kept, and then nothing is said: the user chose."""
    if TEARDOWN_CUPTI in os.environ:
        return None
    if cuda is None:
        import torch

        cuda = torch.version.cuda
    version = cuda_version(cuda)
    if version is not None and version < SAFE_FROM:
        return OLD_CUDA_NOTE.format(cuda=cuda)
    os.environ[TEARDOWN_CUPTI] = "1"
    return None
