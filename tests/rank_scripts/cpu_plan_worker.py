"""Test-only: launchprof's worker on CPU with the GPU parts of the measurement plan replaced,
as tests/test_plan_machine.py's ``fake_gpu`` fixture replaces them (timing, profiler, probe,
capture, validation, bursts, the stream check), and the whole-script profile idle, so that a script's whole run under the worker
(its plan, the stop once measured, where the stream check runs) is exercised without a GPU.
Not part of launchprof: the product never fakes CUDA.

Environment, for the tests: ``LAUNCHPROF_FAKE_LOST_TRACE_RANK=N`` makes rank N's first eager
trace come back empty, so that rank's plan needs ``profile_calls`` more calls than the
others'; ``LAUNCHPROF_FAKE_EXIT_GRACE_S`` shortens the wait before a stopped worker leaves.
"""

import contextlib
import os
import sys
from types import SimpleNamespace

import launchprof.worker.__main__ as worker
from launchprof.events.capture_events import RaceCheckEvent
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.worker import early_stop, plan, plan_profiles, whole_script
from launchprof.worker.call_timer import Timed

import torch


def capture(fn, static_args, static_kwargs, warmup, before_capture):
    before_capture()
    out = fn(*static_args, **static_kwargs)
    return SimpleNamespace(
        graph=SimpleNamespace(replay=lambda: None), static_args=static_args, static_kwargs=static_kwargs, static_out=out,
        anatomy=None, graph_nodes=0, pool_bytes=0, workspace_bytes=0, event=lambda i, moved: NoteEvent(text="captured"),
    )  # fmt: skip


def validate(user, replay, static_out, args, kwargs, *rest):
    replay()
    return SimpleNamespace(eager_out=user(*args, **kwargs), fields={"match": True}, event=lambda *a: NoteEvent(text="validated"))


def _race_check(run, args, kwargs):
    """Where the stream check runs, and that the script's state is as the plan left it."""
    run.events.write(RaceCheckEvent(status="skipped", reason="test: no GPU"))


def fake_gpu() -> None:
    lost = [True] if os.environ.get("LAUNCHPROF_FAKE_LOST_TRACE_RANK") == os.environ.get("RANK", "0") else []
    no_findings = dict(syncs=[], effects=[], rng=[], streams=[], writes=[], containers=[], event=lambda i, max_functions: NoteEvent(text="probe"))
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.empty_cache = lambda *a, **k: None
    for name, value in {
        "nvtx_range": lambda name: contextlib.nullcontext(),
        "timed": lambda fn: (fn(), Timed(wall_us=1.0, gpu_us=1.0)),
        "tear_down_after_profiling": lambda: None,
        "new_profile": contextlib.nullcontext,
        "lost_device_activity": lambda prof: lost.pop(0) if lost else False,
        "write_table": lambda prof, run_dir, what: f"trace-{what}.json.gz",  # never written: the report has no trace
        "probe_call": lambda user, a, k: (user(*a, **k), SimpleNamespace(**no_findings)),
        "capture": capture,
        "validate": validate,
        "memory_event": lambda *a: NoteEvent(text="memory"),
        "profile_replay": lambda run, a, k: setattr(run, "profiled_replay", True),
        "run_plan_bursts": lambda run: None,
        "measure_buckets": lambda run: None,
        "compare_compile": lambda run: None,
        "try_fixes": lambda run: None,
        "check_streams": _race_check,
    }.items():
        for module in (plan, plan_profiles):  # the profiler's parts live in plan_profiles
            if hasattr(module, name):
                setattr(module, name, value)
    whole_script.WholeScript.start = lambda self: None
    whole_script.WholeScript.stop = lambda self, decorated: None
    if os.environ.get("LAUNCHPROF_FAKE_EXIT_GRACE_S"):
        early_stop.EXIT_GRACE_S = float(os.environ["LAUNCHPROF_FAKE_EXIT_GRACE_S"])
    worker.cuda_problem = lambda: None


if __name__ == "__main__":
    fake_gpu()
    sys.exit(worker.entry(sys.argv[1:]))
