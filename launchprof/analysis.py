"""Evidence (+ the profiler traces) -> the Report. Returns data; never prints or plots."""

from __future__ import annotations

import datetime as _dt
import platform
import statistics
from pathlib import Path
from typing import Any

from launchprof import __version__
from launchprof.buckets import recommend
from launchprof.evidence import Evidence
from launchprof.hazards import find_hazards
from launchprof.hazards.shapes import varying_shapes
from launchprof.session import (
    SCHEMA_VERSION,
    EagerProfile,
    KernelSpan,
    Machine,
    Report,
    ReplayProfile,
    RunInfo,
    Timeline,
    Validation,
)
from launchprof.stats import speedup_of, stats_of
from launchprof.trace import CallProfile, gpu_table, launch_api_table, load_trace, per_call, timeline_of
from launchprof.verdict import decide
from launchprof.worker.config import WorkerConfig, plan_size


def _machine(ev: Evidence) -> Machine:
    m = ev.machine or {}
    return Machine(
        gpu=m.get("gpu"), driver=m.get("driver"), cuda=m.get("cuda"), torch=m.get("torch"), python=m.get("python") or platform.python_version()
    )


def eager_calls(ev: Evidence) -> tuple[list[CallProfile], list[dict[str, Any]]]:
    path = ev.traces.get("eager") or ev.traces.get("whole-script")
    if not path or not Path(path).exists():
        return [], []
    trace = load_trace(path)
    gpu = gpu_table(trace)
    calls = per_call(gpu, launch_api_table(trace))
    if not calls and gpu.empty:  # traced, and the GPU did nothing: the target runs no CUDA work
        calls = [CallProfile(0, 0, 0.0, 0.0, [], [], [], [], 0.0)]
    return calls, timeline_of(gpu, 0)


def replay_timeline(ev: Evidence) -> list[dict[str, Any]]:
    path = ev.traces.get("replay")
    if not path or not Path(path).exists():
        return []
    return timeline_of(gpu_table(load_trace(path)), 0)


def eager_profile(ev: Evidence, calls: list[CallProfile]) -> EagerProfile | None:
    if not ev.eager_wall_us and not calls:
        return None
    busy = [c.busy_us for c in calls]
    idle = [1.0 - c.busy_us / c.span_us for c in calls if c.span_us > 0]
    gaps = [g for c in calls for g in c.gaps_us]
    kernels = [c.kernels for c in calls]
    return EagerProfile(
        step_us=stats_of(ev.eager_wall_us),
        # Calls of one step normally agree exactly; with data-dependent flow, the first call's count.
        kernels_per_step=kernels[0] if kernels else None,
        gpu_busy_us=statistics.median(busy) if busy else None,
        gpu_idle_fraction=statistics.median(idle) if idle else None,
        launch_gap_us=stats_of(gaps),
        launch_api_us=statistics.median([c.launch_api_us for c in calls]) if calls else None,
        gpu_span_us=stats_of(ev.eager_gpu_us),
        memcpys_per_step=calls[0].memcpys if calls else None,
        kernel_us=stats_of([k for c in calls for k in c.kernel_us]),
    )


def replay_profile(ev: Evidence) -> ReplayProfile | None:
    cap = ev.capture
    if not cap or not cap.get("ok"):
        return None
    # Validation replays are timed the same way; they stand in when no plain replay ran.
    wall = ev.replay_wall_us or [v["wall_us"] for v in ev.validations if "wall_us" in v]
    gpu = ev.replay_gpu_us or [v["gpu_us"] for v in ev.validations if "gpu_us" in v]
    return ReplayProfile(
        step_us=stats_of(wall),
        graph_nodes=cap.get("graph_nodes"),
        instantiate_us=cap.get("instantiate_us"),
        pool_bytes=cap.get("pool_bytes"),
        capture_us=cap.get("capture_us"),
        node_types=cap.get("node_types") or {},
        gpu_span_us=stats_of(gpu),
    )


def validation_of(ev: Evidence) -> Validation | None:
    if not ev.validations:
        return None
    diffs = [v.get("max_abs_diff") for v in ev.validations if isinstance(v.get("max_abs_diff"), (int, float))]
    return Validation(
        calls_compared=len(ev.validations),
        matches=sum(1 for v in ev.validations if v.get("match")),
        max_abs_diff=max(diffs) if diffs else None,
    )


def run_info(ev: Evidence, worker: dict[str, Any], needed: int) -> RunInfo:
    end = ev.script_end or {}
    cause = None
    complete = bool(ev.plan_end and ev.plan_end.get("reason") in ("complete", "capture failed")) or (
        ev.target is None and end.get("status") == "ok"
    )
    if worker.get("interrupted"):
        cause, complete = "interrupted (Ctrl-C): the report holds what was measured before", False
    elif worker.get("timed_out"):
        cause, complete = f"stopped after the --timeout of {worker.get('timeout')} s", False
    elif ev.environment_problem:
        cause = ev.environment_problem
    elif end.get("status") == "exception":
        exc = end.get("exception") or {}
        where = f" at {Path(exc['file']).name}:{exc['line']}" if exc.get("file") else ""
        cause = f"the script raised {exc.get('type')}: {exc.get('message')}{where}"
    elif end.get("status") == "exit":
        cause = f"the script exited with status {end.get('exit_code')}"
    elif not end:
        rc = worker.get("returncode")
        how = f"signal {-rc}" if isinstance(rc, int) and rc < 0 else f"exit status {rc}"
        cause = f"the script's process died ({how}) without finishing: a crash (segfault, abort, sticky CUDA error or the OOM killer)"
    elif ev.target is not None and not complete:
        calls = ev.target_calls
        reason = (ev.plan_end or {}).get("reason", "")
        if calls == 0:
            cause = f"the target {(ev.target or {}).get('name')} was never called: the script ran to its end without calling it"
        elif calls < needed and "script ended" in reason:
            cause = f"the target was called {calls} times; a full measurement needs about {needed} (use --repeat to lower it)"
        elif reason and reason != "complete":
            cause = reason
    phases = {}
    for a, b in zip(ev.phases, ev.phases[1:] + [{"t": (ev.worker_end or {}).get("wall_s") or 0}], strict=False):
        if a.get("name") and isinstance(b.get("t"), (int, float)):
            phases[a["name"]] = round(float(b["t"]) - float(a["t"]), 3)
    return RunInfo(
        complete=complete,
        cause=cause,
        script_exit=end.get("exit_code"),
        target_calls=ev.target_calls,
        wall_s=worker.get("wall_s"),
        phases_s=phases,
    )


def build_report(
    ev: Evidence,
    script: str,
    target: str | None,
    worker: dict[str, Any],
    repeat: int,
    profile: Any = None,
) -> Report:
    calls, eager_tl = eager_calls(ev)
    ev = ev.with_sequences([c.sequence for c in calls])
    eager = eager_profile(ev, calls)
    replay = replay_profile(ev)
    validation = validation_of(ev)
    replay_samples = (ev.replay_wall_us or [v["wall_us"] for v in ev.validations if "wall_us" in v]) if replay else []
    # Compare replays with the eager calls timed between them when there are enough:
    # neighbours in time share the machine's state (clocks, host load), so the ratio is steadier.
    eager_samples = ev.interleaved_wall_us if len(ev.interleaved_wall_us) >= 5 else ev.eager_wall_us
    speedup = speedup_of(eager_samples, replay_samples)
    captured = None if ev.capture is None else bool(ev.capture.get("ok"))
    verdict = decide(ev.target is not None, captured, validation, speedup)
    notes_extra: list[str] = []
    if ev.target is not None and eager is not None and eager.kernels_per_step == 0:
        # Capture records GPU work only: a replay would skip all of this step's CPU work.
        verdict = "graphs-dont-help"
        notes_extra.append("the target launches no CUDA work (CPU tensors only): a CUDA graph has nothing to replay")
    breakeven = None
    if replay and eager and eager.step_us and replay.step_us:
        from launchprof.predict import breakeven_replays

        breakeven = breakeven_replays(replay.instantiate_us, eager.step_us.median, replay.step_us.median)
    varying = varying_shapes(ev)
    captured_shapes = {}
    if ev.capture and ev.capture.get("ok"):
        idx = ev.capture.get("index")
        for call in ev.calls:
            if call.get("index") == idx:
                captured_shapes = {a["path"]: tuple(a["shape"]) for a in call.get("args", []) if a.get("kind") == "tensor"}
    buckets = recommend(varying, captured_shapes, replay.pool_bytes if replay else None) if varying else None
    predicted = None
    notes = list(ev.notes) + notes_extra
    if profile and eager:
        from launchprof.hazards.inputs import reallocated_arguments

        extra = 2 + len(reallocated_arguments(ev))  # RNG prologue fills + input copies
        predicted, note = predicted_speedup(eager, profile, calls[0].activity_us if calls else None, extra)
        if note:
            notes.append(note)
    timeline = None
    if eager_tl:
        timeline = Timeline(eager=[KernelSpan(**k) for k in eager_tl], replay=[KernelSpan(**k) for k in replay_timeline(ev)])
    return Report(
        schema_version=SCHEMA_VERSION,
        launchprof_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        machine=_machine(ev),
        script=script,
        target=target or ((ev.target or {}).get("name")),
        verdict=verdict,
        eager=eager,
        replay=replay,
        speedup=speedup,
        breakeven_replays=breakeven,
        predicted_speedup=predicted,
        validation=validation,
        hazards=find_hazards(ev),
        buckets=buckets,
        run=run_info(ev, worker, plan_size(WorkerConfig(script, [], target, "", "", repeat=repeat))),
        notes=notes,
        timeline=timeline,
    )


def predicted_speedup(
    eager: EagerProfile, profile: Any, kernel_us: list[float] | None = None, extra_launches: int = 0
) -> tuple[float | None, str | None]:
    """Speedup predicted from the eager trace and the device profile (launchprof.predict).

    Needs only eager numbers, so it also answers "fix the hazards and expect about X"."""
    from launchprof import predict

    if eager.kernels_per_step is None or eager.step_us is None:
        return None, None
    nodes = eager.kernels_per_step + (eager.memcpys_per_step or 0)
    result = predict.predict_speedup(
        nodes,
        kernel_us or (eager.kernel_us.median if eager.kernel_us else None),
        eager.gpu_busy_us,
        eager.launch_api_us,
        eager.step_us.median,
        profile,
        extra_launches=extra_launches,
        # Wall time minus GPU span of the eager step: synchronise and event overhead that
        # every measured step, eager or replay, carries.
        host_overhead_us=max(eager.step_us.median - eager.gpu_span_us.median, 0.0) if eager.gpu_span_us else 0.0,
    )
    return result.speedup, f"prediction: {result.explanation}" if result.explanation else None
