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

# PyTorch's CUDAGraph.replay() launches two small fills per registered generator (the
# RNG offset prologue) on every replay, besides the graph itself.
RNG_PROLOGUE_LAUNCHES = 2


def predicted(ev: Evidence, eager: EagerProfile | None, profile: Any, calls: list[CallProfile]) -> Prediction | None:
    from launchprof import predict

    if profile is None or eager is None or eager.kernels_per_step is None or eager.step_us is None:
        return None
    nodes = eager.kernels_per_step + (eager.memcpys_per_step or 0)
    extra = RNG_PROLOGUE_LAUNCHES + len(reallocated_arguments(ev))  # + one copy per moved input
    result = predict.predict_speedup(
        nodes,
        calls[0].activity_us if calls else (eager.kernel_us.median if eager.kernel_us else None),
        eager.gpu_busy_us,
        eager.launch_api_us,
        eager.step_us.median,
        profile,
        extra_launches=extra,
        # Wall time minus GPU span of the eager step: synchronise and event overhead that
        # every measured step, eager or replay, carries.
        host_overhead_us=max(eager.step_us.median - eager.gpu_span_us.median, 0.0) if eager.gpu_span_us else 0.0,
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
