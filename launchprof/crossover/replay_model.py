"""Predict a workload's replay speedup from its eager profile and the device profile.

``analyze`` calls this with the eager trace's numbers, so the prediction exists even
when capture failed ("fix these hazards and expect about 3.1x"). Pure functions: no
GPU, no torch, tested on CPU against the numbers measured on an H200 in docs/architecture.md.

The estimate of one replay of N kernels is the crossover model
(:mod:`launchprof.crossover.fit`):

    replay ≈ LaunchGraph + Σ_i max(Node, kernel_i + excess)

Each node costs at least what a node of the shortest kernels costs (``graph_node_us``,
close to the floor of empty kernels); a longer kernel costs its own traced time plus
``excess``, the per-node time the GPU spends between graph nodes beyond a kernel's
traced duration (see :func:`node_excess_us`). With tiny kernels this is
LaunchGraph + Node·N; with long ones GPU busy time + excess·N: the two branches of
max(LaunchGraph + Node·N, busy + N·floor), without counting an empty kernel's own time
twice when the kernels themselves are tiny (the trace already counts it in kernel_i).
The speedup is the *measured* eager step over this estimate, so everything the eager
step pays beyond kernels (Python, dispatcher, launch API) counts as what replay removes.

Every prediction carries a 95% interval (the profile's coefficient intervals and the eager
step's, carried through the same model by :mod:`launchprof.crossover.uncertainty`) and a
``basis``: which profile and which measured inputs it rests on, so a reader can tell a
prediction from a quick calibration on this GPU from one borrowed from another machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from launchprof.model.findings import Note, PredictionCode, note
from launchprof.render.words.prediction_text import COEFFICIENT_WORDS, basis_sentence, prediction_sentence

if TYPE_CHECKING:
    from launchprof.crossover.profile import DeviceProfile
    from launchprof.crossover.uncertainty import ReplayModel
    from launchprof.model.stats import Estimate

# PyTorch's RNG prologue: before a replay of a graph that draws random numbers, torch fills
# each registered generator's seed and offset tensors, two small ops launched eagerly.
RNG_PROLOGUE_FILLS = 2


# What the replay estimate reads from a profile; the basis names any of them the sweep left
# undetermined (crossover/determined.py: a 95% interval beyond 2x its median).
PREDICTION_COEFFICIENTS = tuple(COEFFICIENT_WORDS)


@dataclass(frozen=True)
class Prediction:
    """A predicted speedup (the median), its 95% interval, what it rests on, and why.

    ``explanation`` and ``basis`` are the sentences of the records ``why`` and ``rests_on``
    (launchprof.render.words.prediction_text writes them), read from the records so the two
    can never disagree."""

    speedup: float | None
    replay_step_us_estimate: float | None
    why: Note
    bound: str | None = None  # "launch" (node overhead dominates) or "gpu" (kernel time dominates)
    low: float | None = None  # 95% interval of the speedup
    high: float | None = None
    rests_on: Note | None = None  # which profile (GPU/driver/torch, quick or full, where from) and which measured inputs

    @property
    def explanation(self) -> str:
        return prediction_sentence(self.why)

    @property
    def basis(self) -> str:
        return basis_sentence([self.rests_on]) if self.rests_on is not None else ""


def _none(code: PredictionCode) -> Prediction:
    """No prediction, and why not."""
    why = note(code)
    return Prediction(None, None, why)


def finite_median(interval: object) -> float | None:
    """An interval's median as a float; None when it is missing or not finite (a profile
    field that was not measured)."""
    median = getattr(interval, "median", None)
    return float(median) if median is not None and math.isfinite(median) else None


def _positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def node_excess_us(profile: DeviceProfile, node: float) -> float:
    """What a graph node costs beyond its kernel's traced duration (µs; may be negative).

    ``graph_gap_us`` is the per-node time beyond the *nominal* spin duration. A traced
    (CUPTI) duration also counts a kernel's own fixed cost, which the profile measures as
    ``empty_kernel_us`` (an empty kernel's traced duration), so that is taken off. The
    result can be negative: in a graph the next node's launch overlaps the previous
    kernel's tail. ``max(Node, ...)`` in the caller keeps a node from costing less than
    a node of empty kernels. A profile without a traced empty kernel gives
    NO_TRACE_EXCESS_US (0; see below).
    """
    empty = finite_median(profile.empty_kernel_us)
    if empty is None:
        return NO_TRACE_EXCESS_US
    gap = finite_median(profile.graph_gap_us)
    if gap is None:
        floor = finite_median(profile.floor_node_us)
        gap = floor if floor is not None else node
    return gap - empty


# A profile without a traced empty kernel (the calibration inside analyze runs no profiler)
# cannot take a kernel's own fixed cost out of the gap, and the whole gap per node counted
# it twice: calibration gaps of 0.78 and 1.45 µs against 0.155 µs
# where both were measured (gap 0.731 - traced empty kernel 0.576) put the replay of
# dynamic_shapes' 18 nodes at 87.6 µs against 59.5 measured. Traced durations already hold
# that fixed cost, so the excess is taken as 0 there, with the gap as its upper bound.
NO_TRACE_EXCESS_US = 0.0


def replay_estimate_us(
    kernels_per_step: int,
    kernel_us: Sequence[float] | float | None,
    gpu_busy_us: float | None,
    profile: DeviceProfile,
) -> tuple[float, str] | None:
    """(replay step µs, bound) from the model; None when the profile lacks the coefficients."""
    fixed, node = finite_median(profile.graph_launch_fixed_us), finite_median(profile.graph_node_us)
    floor = finite_median(profile.floor_node_us)
    if node is None:
        node = floor
    if fixed is None or node is None:
        return None
    excess = node_excess_us(profile, node)
    n = kernels_per_step
    if isinstance(kernel_us, Sequence) and not isinstance(kernel_us, str) and len(kernel_us) > 0:
        per_kernel = [max(node, float(k) + excess) for k in kernel_us]
        # A list that is not one entry per kernel stands for the distribution: scale it to N.
        gpu = sum(per_kernel) * (n / len(per_kernel))
    else:
        # A median alone misses a few long kernels among many short ones; busy time alone
        # misses the per-node floor of tiny ones. With both, the larger estimate is closer.
        estimates = [n * node]
        if isinstance(kernel_us, (int, float)) and math.isfinite(kernel_us):
            estimates.append(n * max(node, float(kernel_us) + excess))
        if _positive(gpu_busy_us):
            estimates.append(float(gpu_busy_us) + n * excess)  # type: ignore[arg-type]
        gpu = max(estimates)
    # Near n * Node the replay is paced by per-node overhead, not by the kernels themselves.
    bound = "launch" if gpu <= 1.2 * n * node else "gpu"
    return fixed + gpu, bound


def predict_speedup(
    kernels_per_step: int,
    kernel_us: Sequence[float] | float | None,
    gpu_busy_us: float | None,
    launch_api_us: float | None,
    eager_step_us: float | None,
    profile: DeviceProfile | None,
    extra_launches: int = 0,
    *,
    rng_fills: int = 0,
    eager_step_ci: Estimate | None = None,
    profile_source: str | None = None,
) -> Prediction:
    """Predicted eager-step / replay-step ratio for a step of ``kernels_per_step`` kernels.

    ``extra_launches`` are launches a replay step makes besides the graph itself: the
    copies of new inputs into static buffers, each one eager op. ``rng_fills`` are the
    ops of PyTorch's RNG prologue (:data:`RNG_PROLOGUE_FILLS` before each replay of a graph
    that draws random numbers, analysis/prediction.py), each counted as one eager op too. (The
    synchronisation is inside the profile's LaunchGraph, since LaunchGraph and the step
    are both timed submit-and-wait.)

    ``kernel_us`` is the list of kernel durations of one step (or their median, or None);
    ``gpu_busy_us`` the GPU busy time per step; ``launch_api_us`` the host time per step
    in launch calls (only used to explain). Needs only eager numbers and the profile.
    ``eager_step_ci`` is the 95% interval of the eager step median, when known (see
    :func:`eager_step_interval`); ``profile_source`` says where the profile came from (a
    path, "cached at PATH", "measured now"), for the basis.
    """
    if profile is None:
        return _none(PredictionCode.NO_PROFILE)
    if not kernels_per_step or kernels_per_step < 1:
        return _none(PredictionCode.NO_KERNELS)
    if not _positive(eager_step_us):
        return _none(PredictionCode.NO_EAGER_STEP)
    estimate = replay_estimate_us(kernels_per_step, kernel_us, gpu_busy_us, profile)
    if estimate is None:
        return _none(PredictionCode.NO_COEFFICIENTS)
    replay, bound = estimate
    launches = (extra_launches + rng_fills) * (finite_median(profile.eager_op_us) or 0.0)
    replay = replay + launches
    speedup = float(eager_step_us) / replay  # type: ignore[arg-type]
    n = kernels_per_step
    interval = _interval(
        profile, n, kernel_us, gpu_busy_us, float(eager_step_us), eager_step_ci, extra_launches + rng_fills, speedup  # type: ignore[arg-type]
    )
    low, high = (interval.low, interval.high) if interval is not None else (None, None)
    share = min(float(launch_api_us) / float(eager_step_us), 1.0) if _positive(launch_api_us) else None  # type: ignore[arg-type]
    why = note(
        PredictionCode.REPLAY_ESTIMATE, nodes=n, replay_us=replay, launch_us=finite_median(profile.graph_launch_fixed_us),
        node_us=finite_median(profile.graph_node_us) or finite_median(profile.floor_node_us), bound=bound,
        extra_launches=extra_launches, rng_fills=rng_fills, eager_us=float(eager_step_us), speedup=speedup,  # type: ignore[arg-type]
        low=low, high=high, launch_share=share, slower=speedup < 1.0,
    )
    rests_on = basis_record(profile, profile_source, n, kernel_us, gpu_busy_us, float(eager_step_us), eager_step_ci)  # type: ignore[arg-type]
    return Prediction(
        speedup=speedup, replay_step_us_estimate=replay, why=why, bound=bound, low=low, high=high, rests_on=rests_on,
    )


def _uncertain(interval: object, fallback: float) -> Estimate:
    from launchprof.model.stats import Estimate

    return Estimate.of(interval) or Estimate(fallback, fallback, fallback)


def replay_model(profile: DeviceProfile) -> ReplayModel | None:
    """The profile's replay coefficients with their intervals (as :func:`replay_estimate_us` uses them)."""
    from launchprof.crossover.uncertainty import ReplayModel
    from launchprof.model.stats import Estimate

    fixed = finite_median(profile.graph_launch_fixed_us)
    node_iv = profile.graph_node_us if finite_median(profile.graph_node_us) is not None else profile.floor_node_us
    node = finite_median(node_iv)
    if fixed is None or node is None:
        return None
    gap_iv = profile.graph_gap_us
    if finite_median(gap_iv) is None:
        gap_iv = profile.floor_node_us if finite_median(profile.floor_node_us) is not None else node_iv
    gap = _uncertain(gap_iv, node)
    if finite_median(profile.empty_kernel_us) is None:  # node_excess_us: 0, at most the whole gap
        excess = Estimate(NO_TRACE_EXCESS_US, NO_TRACE_EXCESS_US, max(gap.high, NO_TRACE_EXCESS_US))
    else:
        empty = _uncertain(profile.empty_kernel_us, 0.0)
        # excess = gap - empty: the difference's interval widens by both half-widths
        excess = Estimate(gap.median - empty.median, gap.low - empty.high, gap.high - empty.low)
    return ReplayModel(
        fixed=_uncertain(profile.graph_launch_fixed_us, fixed),
        node=_uncertain(node_iv, node),
        excess=excess,
        per_launch=_uncertain(profile.eager_op_us, 0.0),
    )


def _interval(
    profile: DeviceProfile,
    n: int,
    kernel_us: Sequence[float] | float | None,
    gpu_busy_us: float | None,
    eager_step_us: float,
    eager_step_ci: Estimate | None,
    extra_launches: int,
    speedup: float,
) -> Estimate | None:
    """The speedup's 95% interval, always containing the point estimate; None if no model."""
    import numpy as np

    from launchprof.crossover.uncertainty import replay_draws, speedup_interval
    from launchprof.model.stats import DRAW_SEED, Estimate

    model = replay_model(profile)
    if model is None:
        return None
    eager = Estimate(eager_step_us, eager_step_us, eager_step_us)
    ci = eager_step_ci
    if ci is not None and math.isfinite(ci.low) and math.isfinite(ci.high):
        eager = Estimate(eager_step_us, ci.low, ci.high).holding_median()
    rng = np.random.default_rng(DRAW_SEED)
    draws = replay_draws(model, n, kernel_us, gpu_busy_us, extra_launches, rng)
    drawn = speedup_interval(eager, draws, rng, speedup)
    if drawn is None or not (math.isfinite(drawn.low) and math.isfinite(drawn.high)):
        return None
    return Estimate(speedup, drawn.low, drawn.high).holding_median()


def basis_record(
    profile: DeviceProfile,
    source: str | None,
    n: int,
    kernel_us: Sequence[float] | float | None,
    gpu_busy_us: float | None,
    eager_step_us: float,
    eager_step_ci: Estimate | None,
) -> Note:
    """Which profile, and which measured inputs, the prediction rests on."""
    m = profile.machine
    times: int | None = None
    median: float | None = None
    if isinstance(kernel_us, Sequence) and not isinstance(kernel_us, str) and len(kernel_us) > 0:
        times, median = len(kernel_us), float(np.median(kernel_us))
    elif isinstance(kernel_us, (int, float)):
        median = float(kernel_us)
    return note(
        PredictionCode.PROFILE_BASIS, gpu=m.gpu, driver=m.driver, torch=m.torch, partial=bool(profile.partial), plan=profile.plan,
        quick=bool(profile.quick), created=str(profile.created), source=source, noisy=bool(getattr(profile, "noisy", False)),
        undetermined=[c for c in getattr(profile, "undetermined", []) if c in PREDICTION_COEFFICIENTS],
        nodes=n, node_times=times, node_median_us=median, busy_us=float(gpu_busy_us) if _positive(gpu_busy_us) else None,  # type: ignore[arg-type]
        eager_us=eager_step_us, eager_low_us=eager_step_ci.low if eager_step_ci else None, eager_high_us=eager_step_ci.high if eager_step_ci else None,
    )


def eager_step_interval(stats: object) -> Estimate | None:
    """An eager step median with its 95% interval, from its Stats (median, p10, p90, n), or None."""
    from launchprof.crossover.uncertainty import median_ci

    try:
        ci = median_ci(float(stats.median), float(stats.p10), float(stats.p90), int(stats.n))  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError):
        return None
    return ci


def breakeven_replays(instantiate_us: float | None, eager_step_us: float | None, replay_step_us: float | None) -> float | None:
    """Replays needed before the one-off instantiate cost is won back by faster steps.

    instantiate / (eager - replay); None when replay saves nothing (it never pays back)
    or a figure is missing.
    """
    if instantiate_us is None or eager_step_us is None or replay_step_us is None:
        return None
    saved = eager_step_us - replay_step_us
    if not (math.isfinite(saved) and saved > 0 and math.isfinite(instantiate_us)):
        return None
    return max(instantiate_us, 0.0) / saved
