"""The speedup predicted from the eager trace and a device profile (launchprof.predict).

Needs only eager numbers, so a run that could not be captured still gets "fix these
hazards and expect about X".
"""

from __future__ import annotations

from typing import Any

from launchprof.evidence import Evidence
from launchprof.hazards.inputs import reallocated_arguments
from launchprof.session import EagerProfile, Prediction
from launchprof.trace import CallProfile

# What the profile's LaunchGraph already holds, and so is not added again here:
# - PyTorch's RNG prologue (two small fills per registered generator on every
#   ``CUDAGraph.replay()``): the crossover times torch's own ``CUDAGraph.replay()``;
# - the synchronisation: LaunchGraph is a latency (submit and wait) intercept, and the
#   step is timed the same way (worker/burst.py: host clock on bare calls, events outside).
# Before the burst timer, each timed step also carried CUDA events and the plan's
# bookkeeping; "eager step minus GPU span" was added to the replay for that. Added on top of
# a latency-mode LaunchGraph it counted the wait twice (H200 runs: +9 to +22 µs a step).


def eager_interval(ev: Evidence, eager: EagerProfile) -> tuple[float, float] | None:
    """The eager step's 95% interval, widened to the range of its burst medians.

    The median's own interval (60 samples) is a few percent wide, while the step drifts
    more than that during a run (clocks, other processes); the prediction's interval
    should carry that drift, not hide it. Only burst medians are used, and only when the
    reported step is the burst figure (an in-loop step keeps its own interval)."""
    from launchprof import predict

    ci = predict.eager_step_interval(eager.step_us)
    medians = ev.burst_medians_us.get("eager") or []
    if eager.timing != "burst" or len(medians) < 2:
        return ci
    low, high = min(medians), max(medians)
    if ci is not None:
        low, high = min(low, ci[0]), max(high, ci[1])
    return low, high


def predicted(ev: Evidence, eager: EagerProfile | None, profile: Any, calls: list[CallProfile]) -> Prediction | None:
    from launchprof import predict

    if profile is None or eager is None or eager.kernels_per_step is None or eager.step_us is None:
        return None
    nodes = eager.kernels_per_step + (eager.memcpys_per_step or 0)
    extra = len(reallocated_arguments(ev))  # one copy_ per input copied into its static buffer
    result = predict.predict_speedup(
        nodes,
        calls[0].activity_us if calls else (eager.kernel_us.median if eager.kernel_us else None),
        eager.gpu_busy_us,
        eager.launch_api_us,
        eager.step_us.median,
        profile,
        extra_launches=extra,
        eager_step_ci=eager_interval(ev, eager),
    )
    if result.speedup is None:
        return None
    basis = getattr(result, "basis", None) or (
        f"device profile for {getattr(getattr(profile, 'machine', None), 'gpu', None) or 'this GPU'}; "
        f"eager trace: {nodes} nodes, step {eager.step_us.median:.1f} µs ({eager.timing or 'timing unknown'})"
    )
    return Prediction(
        median=float(result.speedup),
        low=getattr(result, "low", None),
        high=getattr(result, "high", None),
        basis=basis,
        replay_step_us=result.replay_step_us_estimate,
        explanation=result.explanation or None,
    )
