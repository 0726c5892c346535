"""Which samples are the reported step times, and the figures built from them.

The reported ``step_us`` is the user's step timed back to back in interleaved bursts
(``timing`` events, ``timing = "burst"``): nothing of launchprof's bookkeeping is inside
those timed regions. Runs without bursts (older workers, or a run that stopped before
them) fall back to the calls the script made, timed in its loop, labelled ``"in-loop"``.
Both sides of the speedup always come from the same kind of timing, so the ratio never
mixes a burst with an in-loop figure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from launchprof.events.capture_events import CaptureEvent
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Note, NoteCode, note
from launchprof.model.step_timing import HostVariation, Speedup, Stats
from launchprof.model.stats import burst_ratio_interval, speedup_of, stats_of
from launchprof.render.words.interval_text import speedup_method

BURST, IN_LOOP = "burst", "in-loop"
# Compare replays with the eager calls timed between them when there are enough of them:
# neighbours in time share the machine's state (clocks, host load).
MIN_INTERLEAVED = 5


@dataclass(frozen=True)
class StepSamples:
    """The wall samples behind one side's ``step_us``, and how they were timed."""

    samples: list[float]
    gpu: list[float]
    timing: str | None
    in_loop: list[float]  # the in-loop samples, kept as evidence when bursts are reported
    burst_medians: list[float] = dataclasses.field(default_factory=list)  # each burst's median, in burst order


def in_loop_eager(ev: Evidence) -> list[float]:
    return ev.interleaved_wall_us if len(ev.interleaved_wall_us) >= MIN_INTERLEAVED else ev.eager_wall_us


def in_loop_replay(ev: Evidence) -> tuple[list[float], list[float]]:
    """In-loop replays; validation replays are timed the same way and stand in when none ran."""
    wall = ev.replay_wall_us or [v.wall_us for v in ev.validations if v.wall_us is not None]
    gpu = ev.replay_gpu_us or [v.gpu_us for v in ev.validations if v.gpu_us is not None]
    return wall, gpu


def uses_bursts(ev: Evidence) -> bool:
    """Bursts are reported only when both eager and replay have them (the same method)."""
    return bool(ev.burst_wall_us.get("eager")) and bool(ev.burst_wall_us.get("replay"))


def eager_samples(ev: Evidence) -> StepSamples:
    """Burst samples when replay has them too, or when there is no replay figure at all to
    keep the same method with (capture failed: the eager bursts are the only honest step)."""
    loop = in_loop_eager(ev)
    no_replay = not in_loop_replay(ev)[0]
    if uses_bursts(ev) or (ev.burst_wall_us.get("eager") and (not loop or no_replay)):
        return StepSamples(ev.burst_wall_us["eager"], ev.burst_gpu_us.get("eager", []), BURST, ev.eager_wall_us, ev.burst_medians_us.get("eager", []))
    return StepSamples(loop, ev.eager_gpu_us, IN_LOOP if loop else None, [])


def replay_samples(ev: Evidence) -> StepSamples:
    wall, gpu = in_loop_replay(ev)
    if uses_bursts(ev):
        return StepSamples(ev.burst_wall_us["replay"], ev.burst_gpu_us.get("replay", []), BURST, wall, ev.burst_medians_us.get("replay", []))
    return StepSamples(wall, gpu, IN_LOOP if wall else None, [])


# A GPU-paced step's speedup between processes on an H200: long_kernels read 0.96, 0.99, 1.03,
# 0.99, 1.02, 1.03 in six processes (benchmarks/rerun-intervals, gpu-check), 1.07x apart at
# most, each process's own interval narrower than that; a rerun's median stays within this
# factor of another's.
DEVICE_SPREAD = 1.08


def speedup(eager: StepSamples, replay: StepSamples, variation: HostVariation | None = None) -> Speedup | None:
    """Ratio of the two medians printed beside it, with a 95% interval that a rerun keeps.

    ``median`` is exactly eager.step_us.median / replay.step_us.median, this run's measurement.
    The interval of this process (``within_low``/``within_high``) resamples both sample sets
    independently (they are not paired call by call) and, with bursts, spans the per-burst
    ratios' t-interval too: the bursts are what drift. ``variation`` (analysis/host_range.py)
    then multiplies its ends by how far the speedup moves on another process's host."""
    if eager.timing != replay.timing:  # a burst against an in-loop figure is no ratio at all
        return None
    result = speedup_of(eager.samples, replay.samples)
    if result is None:
        return None
    low, high = result.low, result.high
    bursts = burst_ratio_interval(eager.burst_medians, replay.burst_medians, result.median) if eager.timing == BURST else None
    if bursts is not None:
        low, high = min(low, bursts.low), max(high, bursts.high)
    wide_low, wide_high = (low, high) if variation is None else (low * variation.low_factor, high * variation.high_factor)
    if variation is not None:  # the device's own clock between processes, which no host factor covers
        wide_low, wide_high = min(wide_low, result.median / DEVICE_SPREAD), max(wide_high, result.median * DEVICE_SPREAD)
    return Speedup(
        median=result.median, low=min(wide_low, result.median), high=max(wide_high, result.median),
        method=speedup_method(eager.timing == BURST, bursts is not None, variation),
        within_low=low, within_high=high, between_process=variation,
    )


def loop_stats(samples: StepSamples) -> Stats | None:
    """The in-loop numbers, reported beside burst numbers (labelled), else None."""
    return stats_of(samples.in_loop) if samples.timing == BURST else None


def setup_us(capture: CaptureEvent | None) -> float | None:
    """Capture + warm-up + instantiate: the one-off cost a graph has to win back."""
    if capture is None or not capture.ok:
        return None
    parts = (capture.capture_us, capture.warmup_us, capture.instantiate_us)
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def breakeven(setup: float | None, eager_us: float | None, replay_us: float | None) -> float | None:
    """Replays before ``setup`` (capture + warm-up + instantiate) is won back: the one
    formula, :func:`launchprof.crossover.replay_model.breakeven_replays`."""
    from launchprof.crossover.replay_model import breakeven_replays

    return breakeven_replays(setup, eager_us, replay_us)


def stopped_early_notes(ev: Evidence) -> list[Note]:
    """One note per kind of burst timing that hit its time cap before its sample count."""
    return [
        note(NoteCode.STOPPED_EARLY, kind=str(end.kind), samples=end.samples, seconds=float(end.seconds or 0), why=end.why or None)
        for end in ev.timing_ends
        if end.stopped_early
    ]
