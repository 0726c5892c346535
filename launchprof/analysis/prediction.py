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
# - the synchronisation: LaunchGraph is a latency (submit and wait) intercept, and the
#   step is timed the same way (worker/burst.py: host clock on bare calls, events outside).
# Before the burst timer, each timed step also carried CUDA events and the plan's
# bookkeeping; "eager step minus GPU span" was added to the replay for that. Added on top of
# a latency-mode LaunchGraph it counted the wait twice (H200 runs: +9 to +22 µs a step).


# PyTorch's RNG prologue: before each ``CUDAGraph.replay()`` of a graph that draws random
# numbers, torch fills the generator's seed and offset tensors (two small ops launched
# eagerly). Since torch 2.7 (pytorch#143777) a graph that draws none skips them, so the
# crossover's LaunchGraph (timed on graphs without RNG) does not hold them: on the H200
# (torch 2.11) dropout_train's replay trace shows the two fill kernels ahead of the graph's,
# and its replay read 41.1 µs against 29.6 µs predicted without them. Before 2.7 every
# replay paid them, the crossover's too, so nothing is added there.
RNG_FILLS = 2
FILLS_ONLY_WITH_RNG_FROM = (2, 7)


def torch_version(text: object) -> tuple[int, int] | None:
    """(major, minor) of a torch version string ("2.11.0+cu130"); None if unknown."""
    try:
        major, minor = str(text).split("+")[0].split(".")[:2]
        return int(major), int(minor)
    except (TypeError, ValueError):
        return None


def rng_prologue_fills(ev: Evidence) -> int:
    """Ops a replay launches before the graph for its RNG prologue (0 when the step draws no
    CUDA random numbers, the worker did not say, or torch predates 2.7)."""
    if not ev.cuda_rng:
        return 0
    version = torch_version((ev.machine or {}).get("torch"))
    return RNG_FILLS if version is not None and version >= FILLS_ONLY_WITH_RNG_FROM else 0


HOST_DRIFT = 0.15  # the profile's NOISY bound: host coefficients that moved more than this


def host_speed_note(ev: Evidence, profile: Any) -> str | None:
    """A note when the host ran at another speed than when the profile was measured: the
    worker times the profile's own eager-op loop after the bursts (worker/host_speed.py).
    The prediction is not corrected (no GPU run has checked a correction yet); it is said."""
    from launchprof import predict

    now = ev.host_eager_op_us
    then = predict._value(getattr(profile, "eager_op_us", None)) if profile is not None else None
    if not (now and then and now > 0 and then > 0) or abs(then / now - 1) <= HOST_DRIFT:
        return None
    faster = now < then
    return (
        f"this host ran {'faster' if faster else 'slower'} than when the device profile was measured (an eager op "
        f"took {now:.1f} µs after the bursts, {then:.1f} µs in the profile): the predicted replay's launch costs may "
        f"read {'high, and the prediction low' if faster else 'low, and the prediction high'}; "
        "`launchprof crossover` measures a new profile"
    )


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
        rng_fills=rng_prologue_fills(ev),
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
