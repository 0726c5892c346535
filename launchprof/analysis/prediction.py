"""The speedup predicted from the eager trace and a device profile (launchprof.crossover.replay_model).

Needs only eager numbers, so a run that could not be captured still gets "fix these
hazards and expect about X".
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from launchprof.crossover.profile import DeviceProfile, Interval
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, PredictionCode, note
from launchprof.hazards.inputs import reallocated_arguments
from launchprof.crossover.replay_model import RNG_PROLOGUE_FILLS
from launchprof.model.step_timing import PROFILED, EagerProfile, basis_of, derived
from launchprof.model.predicted import Prediction
from launchprof.render.words.prediction_text import basis_sentence
from launchprof.model.stats import Estimate

if TYPE_CHECKING:  # the trace tables (pandas) load with the first trace read
    from launchprof.common.trace_tables import CallProfile

# What the profile's LaunchGraph already holds, and so is not added again here:
# - the synchronisation: LaunchGraph is a latency (submit and wait) intercept, and the
#   step is timed the same way (worker/burst.py: host clock on bare calls, events outside).
# Before the burst timer, each timed step also carried CUDA events and the plan's
# bookkeeping; "eager step minus GPU span" was added to the replay for that. Added on top of
# a latency-mode LaunchGraph it counted the wait twice (+9 to +22 µs a step).


# PyTorch's RNG prologue (launchprof.crossover.replay_model.RNG_PROLOGUE_FILLS ops before each
# ``CUDAGraph.replay()`` of a graph that draws random numbers). Since torch 2.7
# (pytorch#143777) a graph that draws none skips them, so the crossover's LaunchGraph
# (timed on graphs without RNG) does not hold them: on torch 2.11, measured on an H200,
# dropout_train's replay trace shows the two fill kernels ahead of the graph's, and its
# replay read 41.1 µs against 29.6 µs predicted without them. Before 2.7 every replay
# paid them, the crossover's too, so nothing is added there.
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
    if not ev.mutations.cuda_rng:  # the step draws from the default CUDA generator (None: not said)
        return 0
    version = torch_version(ev.machine.torch if ev.machine else None)
    return RNG_PROLOGUE_FILLS if version is not None and version >= FILLS_ONLY_WITH_RNG_FROM else 0


HOST_DRIFT = 0.15  # the profile's NOISY bound: a host this much faster or slower is said in a note

# The profile's coefficients that the host's speed sets: launch calls, not GPU work. On
# one machine two default sweeps a minute apart read eager_op_us 9.82 and
# 6.65 µs, raw_launch_us 5.85 and 4.09, graph_launch_fixed_us 12.83 and 8.54: all three
# moved by the same 1.43-1.50x, while the per-node GPU figures (graph_node_us 0.684/0.695,
# floor 0.677/0.678) stayed. The process's host speed is what differs (analyze runs on that
# machine read 6.7 to 11.6 µs per eager op after their bursts).
HOST_COEFFICIENTS = ("eager_op_us", "raw_launch_us", "graph_launch_fixed_us")


# A scale outside this range is not a host that ran faster or slower but a broken loop (a
# slope near zero, a process stalled for the whole loop): the prediction then uses the
# profile as measured, and says so.
SCALE_RANGE = (0.4, 2.5)


def _host_speeds(ev: Evidence, profile: DeviceProfile | None) -> tuple[float, float] | None:
    """(µs per eager op in this run, in the profile), both known and positive; else None."""
    import launchprof.crossover.replay_model as predict

    now = ev.host_eager_op_us
    then = predict.finite_median(getattr(profile, "eager_op_us", None)) if profile is not None else None
    return (float(now), then) if now and then and now > 0 and then > 0 else None


def host_scale(ev: Evidence, profile: DeviceProfile | None) -> Estimate | None:
    """This run's host speed over the profile's, and the range of its samples: the eager-op
    loop the worker sampled between the bursts (worker/host_speed.py; older runs: after them)
    against the same loop in the profile. Its range is that of the samples' own slopes, so the prediction's interval
    carries the host's drift during the bursts. None when either is unknown (runs recorded
    before the ``host-speed`` event, a profile without eager_op_us) or out of SCALE_RANGE."""
    speeds = _host_speeds(ev, profile)
    if speeds is None:
        return None
    now, then = speeds
    scale = now / then
    if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
        return None
    slopes = [v / then for v in ev.host_op_slopes if v > 0]
    return Estimate(scale, min([scale, *slopes]), max([scale, *slopes]))


def at_host_speed(profile: DeviceProfile | None, scale: Estimate | None) -> DeviceProfile | None:
    """The profile with its host-side coefficients scaled to this run's host speed.

    The replay is predicted for the host the eager step was timed on: a profile measured when
    the host ran 1.4x slower would count the graph launch 1.4x too dear. Only the launch
    costs scale; the GPU-side per-node figures do not depend on the host. Each interval's
    ends scale by the ends of the host's own range."""
    if scale is None or profile is None or not dataclasses.is_dataclass(profile):
        return profile
    scaled = {}
    for name in HOST_COEFFICIENTS:
        iv = getattr(profile, name, None)
        if iv is not None:
            scaled[name] = Interval(median=iv.median * scale.median, low=iv.low * scale.low, high=iv.high * scale.high)
    return dataclasses.replace(profile, **scaled)


def host_speed_note(ev: Evidence, profile: DeviceProfile | None) -> Note | None:
    """A note when the host ran at another speed than when the profile was measured, and by
    how much the prediction's launch costs were scaled for it."""
    speeds = _host_speeds(ev, profile)
    if speeds is None or abs(speeds[0] / speeds[1] - 1) <= HOST_DRIFT:
        return None
    now, then = speeds
    if host_scale(ev, profile) is None:
        return note(NoteCode.HOST_SPEED_FAILED, run_op_us=now, profile_op_us=then, low=SCALE_RANGE[0], high=SCALE_RANGE[1])
    return note(NoteCode.HOST_SPEED_SCALED, run_op_us=now, profile_op_us=then, scale=now / then)


def eager_interval(ev: Evidence, eager: EagerProfile) -> Estimate | None:
    """The eager step's 95% interval, widened to the range of its burst medians.

    The median's own interval (60 samples) is a few percent wide, while the step drifts
    more than that during a run (clocks, other processes); the prediction's interval
    should carry that drift, not hide it. Only burst medians are used, and only when the
    reported step is the burst figure (an in-loop step keeps its own interval)."""
    import launchprof.crossover.replay_model as predict

    ci = predict.eager_step_interval(eager.step_us)
    medians = ev.burst_medians_us.get("eager") or []
    if eager.timing != "burst" or len(medians) < 2:
        return ci
    low, high = min(medians), max(medians)
    if ci is not None:
        low, high = min(low, ci.low), max(high, ci.high)
    return Estimate(eager.step_us.median if eager.step_us else (low + high) / 2, low, high)


GPU_BOUND_IDLE = 0.05  # an eager step whose GPU idles less than this is paced by its kernels
CLOCK_RANGE = (0.9, 1.3)  # H200 long_kernels: 1.13-1.15; clocks drop under load, they do not double


def gpu_clock_scale(eager: EagerProfile) -> float | None:
    """How much longer the kernels ran during the timed bursts than in the profiled call.

    The node times come from one profiled call; the eager and replay steps are timed later,
    in bursts. A GPU kept busy for seconds lowers its clocks:
    long_kernels' profiled step (the second of three runs) kept the GPU busy 2796 µs (1.4% idle), while its bursts read
    a 3215 µs GPU span, and replay 3181-3252 µs against 2806 predicted. Where the step keeps
    the GPU busy, the bursts' event-timed span is the kernels' time at the bursts' clocks,
    so the traced node times are scaled to it. Elsewhere the span holds launch gaps and
    says nothing about the clock: None."""
    idle, busy, span = eager.gpu_idle_fraction, eager.gpu_busy_us, eager.gpu_span_us
    if basis_of(eager, "gpu_busy_us") != PROFILED:  # read from the bursts' own events: already at their clocks
        return None
    if eager.timing != "burst" or idle is None or busy is None or span is None or not busy > 0:
        return None
    if idle >= GPU_BOUND_IDLE or not span.median or span.median <= 0:
        return None
    scale = float(span.median) / (busy / (1 - idle))
    # The event-timed span also holds any host time between its first event and the first
    # kernel (a Python preamble): a scale beyond CLOCK_RANGE is that, not the clock.
    return scale if CLOCK_RANGE[0] <= scale <= CLOCK_RANGE[1] else None


def predicted(ev: Evidence, eager: EagerProfile | None, profile: DeviceProfile | None, calls: list[CallProfile]) -> Prediction | None:
    import launchprof.crossover.replay_model as predict

    if profile is None or eager is None or eager.kernels_per_step is None or eager.step_us is None:
        return None
    scale = host_scale(ev, profile)
    profile = at_host_speed(profile, scale)
    nodes = eager.kernels_per_step + (eager.memcpys_per_step or 0)
    extra = len(reallocated_arguments(ev))  # one copy_ per input copied into its static buffer
    kernels = calls[0].activity_us if calls else (eager.kernel_us.median if eager.kernel_us else None)
    busy, clock = eager.gpu_busy_us, gpu_clock_scale(eager)
    if clock is not None:
        kernels = [k * clock for k in kernels] if isinstance(kernels, list) else (kernels * clock if kernels else kernels)
        busy = busy * clock if busy else busy
    result = predict.predict_speedup(
        nodes,
        kernels,
        busy,
        eager.launch_api_us,
        eager.step_us.median,
        profile,
        extra_launches=extra,
        rng_fills=rng_prologue_fills(ev),
        eager_step_ci=eager_interval(ev, eager),
    )
    if result.speedup is None:
        return None
    basis = [result.rests_on or note(
        PredictionCode.TRACE_BASIS, gpu=getattr(getattr(profile, "machine", None), "gpu", None), nodes=nodes,
        eager_us=eager.step_us.median, timing=eager.timing,
    )]
    if derived(eager):
        basis = [*(_from_graph(r) for r in basis), note(PredictionCode.GRAPH_BASIS, nodes=nodes)]
    if clock is not None:
        basis.append(note(PredictionCode.NODE_TIMES_SCALED, scale=clock))
    if scale is not None and ev.host_eager_op_us is not None:
        op = float(ev.host_eager_op_us)
        basis.append(note(
            PredictionCode.LAUNCH_COSTS_SCALED, scale=scale.median, low=scale.low, high=scale.high, run_op_us=op, profile_op_us=op / scale.median,
        ))
    return Prediction(
        median=float(result.speedup),
        low=getattr(result, "low", None),
        high=getattr(result, "high", None),
        basis=basis_sentence(basis),
        replay_step_us=result.replay_step_us_estimate,
        explanation=result.explanation or None,
        host_scale=scale.median if scale is not None else None,
        launch_costs_us=_launch_costs(profile),
        explanation_finding=result.why,
        basis_findings=basis,
    )


def _from_graph(record: Note) -> Note:
    """A basis record whose node count is the graph's, not the eager trace's."""
    if record.code != PredictionCode.PROFILE_BASIS.value:
        return record
    return Note(record.code, {**record.params, "nodes_from_graph": True}, record.actionable)


def _launch_costs(profile: DeviceProfile | None) -> dict[str, float] | None:
    """The profile's launch costs as this prediction used them (already at the host's speed)."""
    names = {"eager_op": "eager_op_us", "graph_launch": "graph_launch_fixed_us", "graph_node": "graph_node_us"}
    costs = {key: float(iv.median) for key, field in names.items() if (iv := getattr(profile, field, None)) is not None and iv.median is not None}
    return costs or None
