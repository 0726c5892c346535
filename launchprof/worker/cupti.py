"""CUPTI teardown after each profiler session of a target's plan.

Kineto leaves CUPTI subscribed when a ``torch.profiler`` session ends unless
``TEARDOWN_CUPTI=1`` (pytorch/pytorch#144455). Its callbacks then slow every later launch
and synchronisation of the process, and the plan's timed bursts run after its profiled
calls: they timed launchprof's profiler as well as the user's step. On the H200 (one run
each), teardown brought analyze's eager step from 1.3-2.2x a direct timing loop to within
2-7% of it on four of seven samples; two stay off (docs/timing-truth.md).

Kineto reads the variable at every profiler stop, so setting it before the plan's first
profiler is enough. A value the user set is kept. The whole-script overview (no target)
does not set it: nothing is timed after its profiler, and teardown there has not been
checked on a GPU.
"""

from __future__ import annotations

import os

TEARDOWN_CUPTI = "TEARDOWN_CUPTI"


def tear_down_after_profiling() -> bool:
    """Ask kineto to release CUPTI when each profiler session ends; False if the user chose."""
    if TEARDOWN_CUPTI in os.environ:
        return os.environ[TEARDOWN_CUPTI] == "1"
    os.environ[TEARDOWN_CUPTI] = "1"
    return True
