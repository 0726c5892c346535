"""How far another process's speedup may sit from this one's: the host's speed between processes.

One process's samples pin its own ratio to a few percent, but the next process on the same
machine runs on a host of another speed. On an H200 (docs/measurements.md) the same
``x.add_`` loop read 6.7 to 11.6 µs per op in 20 analyzed processes, and the host-paced
``decode_loop`` step read 1,553 to 3,236 µs eager in nine processes while its replay held
(254-262 µs in one session, 460-478 in another): 4.03x, 3.76x, 6.71x, 6.47x, 8.53x and 12.37x,
each with a bootstrap interval of about 2%. A GPU-bound step (``long_kernels``) read
0.99-1.03x throughout.

So the reported interval carries the host's speed: the step is split into what the host
paces and what the GPU paces (launchprof.model.stats.HostPaced), and the speedup is taken
over a host from :data:`DEFAULT_FACTOR` times faster to as many times slower, or further
where this run measured more (its eager-op loop against the profile's, the profile's
rounds, its own samples). The default is the widest process-to-process range of a
host-paced eager step in the H200 recordings (tests/data/runs, predict, compile_runs,
compile_rounds): two_streams_ok 105-231 µs in five processes (2.19x); the documented
decode_loop runs read 1,553-3,236 µs (2.08x, docs/timing-truth.md). A step moves more than the ``x.add_`` loop does (two_streams_ok
2.19x where the loop read 7.0 and 11.2 µs, 1.6x), and what launchprof measures is seconds
apart or between two processes only (1.1-1.6x on that machine), so the measurements widen
the range and never narrow it. On those recordings no run's median falls outside another
run's interval (tests/test_rerun_interval.py); with each process's samples alone 48 of 100
pairs did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from launchprof.analysis.prediction import GPU_BOUND_IDLE, at_host_speed, gpu_clock_scale, host_scale, rng_prologue_fills
from launchprof.crossover.profile import DeviceProfile
from launchprof.hazards.inputs import reallocated_arguments
from launchprof.model.stats import HostPaced, host_factor_range
from launchprof.model.step_timing import EagerProfile, HostVariation
from launchprof.run.evidence import Evidence

DEFAULT_FACTOR = 2.2  # two_streams_ok eager 105-231 µs, decode_loop 1,553-3,236 µs between processes on the H200
DEFAULT = "default"
# A graph launch (submit and wait) costs this many eager ops (``x.add_``) on the same host: eleven
# H200 profiles read 1.23-1.42 (graph_launch_fixed_us 8.26-14.80 µs against eager_op_us 6.09-10.42).
LAUNCH_IN_OPS = 1.3


@dataclass(frozen=True)
class HostFactor:
    """The host-speed factor between processes and the measurements weighed for it."""

    factor: float
    basis: str
    run_vs_profile: float | None
    profile_rounds: float | None
    run_samples: float | None


def _either_way(ratio: float | None) -> float | None:
    return max(ratio, 1.0 / ratio) if ratio is not None and ratio > 0 and math.isfinite(ratio) else None


def host_factor(ev: Evidence, profile: DeviceProfile | None) -> HostFactor:
    """The largest of the default and what this run and its profile measured of the host."""
    scale = host_scale(ev, profile)
    vs_profile = _either_way(scale.median) if scale is not None else None
    spread = (profile.spread or {}).get("eager_op_us") if profile is not None else None
    rounds = 1.0 + float(spread) if spread is not None and spread >= 0 else None
    slopes = [v for v in ev.host_op_slopes if v > 0]
    samples = max(slopes) / min(slopes) if len(slopes) >= 2 else None
    measured = {"run-vs-profile": vs_profile, "profile-rounds": rounds, "run-samples": samples}
    basis, factor = DEFAULT, DEFAULT_FACTOR
    for name, value in measured.items():
        if value is not None and value > factor:
            basis, factor = name, value
    return HostFactor(factor, basis, vs_profile, rounds, samples)


def eager_paced(eager: EagerProfile, step_us: float) -> tuple[float, float]:
    """(host-paced µs, GPU busy µs) of the eager step. Where the GPU idles (waits on the
    host), the host sets the pace of the whole step; where it is kept busy, only the host
    time beyond the GPU's (or, at least, the launch calls' own time) could ever set it."""
    busy = eager.gpu_busy_us if eager.gpu_busy_us is not None and eager.gpu_busy_us > 0 else 0.0
    clock = gpu_clock_scale(eager)
    gpu = busy * clock if clock is not None else busy
    idle = eager.gpu_idle_fraction
    if idle is None or idle >= GPU_BOUND_IDLE or gpu <= 0:
        return step_us, min(gpu, step_us)
    return max(eager.launch_api_us or 0.0, step_us - gpu, 0.0), gpu


def replay_host(ev: Evidence, profile: DeviceProfile | None, replay_us: float) -> tuple[float, float] | None:
    """The replay's host part at this run's host speed, as a range: from half the graph
    launch to the launch plus one eager op per input copied in and per RNG prologue fill.
    The launch and the op are the profile's, scaled to this run's host; without a profile,
    this run's own eager-op loop and :data:`LAUNCH_IN_OPS` of it; None without either.

    The launch is timed with its wait (submit and wait), and copies and fills overlap the
    GPU's work: on the H200 recordings a replay moved by 7-10 µs where its eager step moved
    2x (two_streams_ok 29.0 -> 37.4 µs, dropout_train 43.1 -> 52.5), less than the 16-25 µs
    the launch and its extra ops add up to. The range's low end moves the replay least,
    which widens the speedup's interval; its high end narrows it."""
    parts = replay_host_parts(ev, profile)
    if parts is None:
        return None
    launch, op, extra = parts
    return min(replay_us, launch / 2), min(replay_us, launch + extra * op)


def replay_host_parts(ev: Evidence, profile: DeviceProfile | None) -> tuple[float, float, int] | None:
    """(graph launch µs, eager op µs, extra ops) of a timed replay at this run's host speed:
    the profile's launch and op scaled to this run's host, else this run's own eager-op loop
    and :data:`LAUNCH_IN_OPS` of it; the extra ops are one per input copied in and per RNG
    prologue fill. None without either source."""
    scaled = at_host_speed(profile, host_scale(ev, profile))
    launch = getattr(getattr(scaled, "graph_launch_fixed_us", None), "median", None)
    op = getattr(getattr(scaled, "eager_op_us", None), "median", None)
    if launch is None or op is None:
        run_op = ev.host_eager_op_us
        if run_op is None or not run_op > 0:
            return None
        launch, op = LAUNCH_IN_OPS * float(run_op), float(run_op)
    extra = len(reallocated_arguments(ev)) + rng_prologue_fills(ev)
    return max(float(launch), 0.0), float(op), extra


def host_variation(ev: Evidence, eager: EagerProfile | None, replay_us: float | None, profile: DeviceProfile | None) -> HostVariation | None:
    """The between-process part of the speedup's interval; None without both step times."""
    if eager is None or eager.step_us is None or replay_us is None or not replay_us > 0 or not eager.step_us.median > 0:
        return None
    step = float(eager.step_us.median)
    host_us, gpu_us = eager_paced(eager, step)
    replay_range = replay_host(ev, profile, replay_us)
    factor = host_factor(ev, profile)
    ends = [host_factor_range(HostPaced(step, host_us, gpu_us, float(replay_us), r), factor.factor) for r in (replay_range or (0.0,))]
    return HostVariation(
        factor=factor.factor, basis=factor.basis, eager_host_us=host_us, eager_gpu_us=gpu_us,
        replay_host_us=replay_range[1] if replay_range else None, replay_host_low_us=replay_range[0] if replay_range else None,
        low_factor=min(lo for lo, _ in ends), high_factor=max(hi for _, hi in ends), run_vs_profile=factor.run_vs_profile,
        profile_rounds=factor.profile_rounds, run_samples=factor.run_samples,
    )
