"""Whether the plan runs torch.profiler on the target's eager calls, decided at its start.

CUPTI's start-up costs seconds, and the graph's own nodes and the bursts' CUDA events give
the report's counts and spans without it. The profiler stays where a figure has no other
source: the user asked for kernels or traces; the graph cannot be read (no cuda.bindings);
collectives are told apart by kernel name on every rank; the compile comparison and the
whole-script overview pay for CUPTI anyway. Otherwise the plan decides after it has run
(worker/plan_profiles.py ``profile_after_plan``): a failed capture or differing op
sequences profile the recorded eager calls then.
"""

from __future__ import annotations

import importlib.util

from launchprof.worker.config import WorkerConfig

ASKED = ("kernels", "save-trace")  # WorkerConfig.profiler values that force the profiler


def _found(name: str) -> bool:
    """Whether a module can be imported, without importing it (its parents are imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def has_cuda_bindings() -> bool:
    """The runtime and driver bindings worker/graphinfo.py reads the graph through."""
    runtime = _found("cuda.bindings.runtime") or _found("cuda.cudart")
    return runtime and _found("cuda.bindings.driver")


def reason_to_profile(config: WorkerConfig) -> str | None:
    """Why the eager calls are profiled from the start, or None when they need not be."""
    if config.profiler in ASKED:
        return config.profiler
    if not has_cuda_bindings():
        return "no-cuda-bindings"
    if config.ranks > 0:
        return "ranks"
    if "compile" in config.compare:
        return "compare-compile"
    if config.target is None:
        return "overview"
    return None
