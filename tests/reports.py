"""Realistic reports for renderer and command tests, shaped like H200 runs.

Numbers follow the H200 observations in docs/architecture.md (about 7 µs per eager op, about 1 µs
per replayed node). Paths live under ``ROOT`` so that renderers given
``project_root=ROOT`` print short, machine-independent locations. Recorded sessions
under ``tests/data/*.report.json`` are added by :func:`recorded_reports`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bucket_events import measured_plan
from launchprof.hazards.kinds import KINDS
from launchprof.model.core import SCHEMA_VERSION, Machine, Report, RunInfo
from launchprof.model.step_timing import EagerProfile, KernelSpan, ReplayProfile, Speedup, Stats, Timeline, Validation
from launchprof.model.hazard_records import Hazard
from launchprof.analysis.load import load_report

ROOT = Path("/home/ci/llm-decode")
DATA = Path(__file__).resolve().parent / "data"
H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")


def hazard(kind: str, message: str, file: str | None, line: int | None, **kw) -> Hazard:
    """A hazard with the kind's default severity and hint unless given."""
    kw.setdefault("severity", KINDS[kind].severity)
    return Hazard(kind=kind, message=message, file=file, line=line, hint=KINDS[kind].hint, **kw)


def _timeline() -> Timeline:
    """Eager: 12 small kernels with launch gaps; replay: the same kernels back to back."""
    names = ["ampere_sgemm_64x32_nn", "vectorized_elementwise_kernel<add>", "softmax_warp_forward"] * 4
    eager, replay, t_eager, t_replay = [], [], 0.0, 0.0
    for i, name in enumerate(names):
        dur = 3.0 + (i % 3)
        eager.append(KernelSpan(name, t_eager, dur))
        replay.append(KernelSpan(name, t_replay, dur))
        t_eager += dur + 6.5
        t_replay += dur + 0.8
    eager.insert(0, KernelSpan("Memcpy HtoD (Pinned -> Device)", -4.0, 2.0, "memcpy"))
    return Timeline(eager=eager, replay=replay)


def graphs_help(root: Path = ROOT) -> Report:
    """A decode step that graphs speed up 2.3x, with a frozen scalar and varying shapes."""
    decode = str(root / "decode.py")
    return Report(
        schema_version=SCHEMA_VERSION,
        launchprof_version="0.1.0",
        created="2025-11-28T14:03:11Z",
        machine=H200,
        script=decode,
        target="step",
        verdict="graphs-help",
        eager=EagerProfile(
            step_us=Stats(median=1843.2, p10=1820.5, p90=1901.7, n=25),
            kernels_per_step=212,
            gpu_busy_us=701.4,
            gpu_idle_fraction=0.619,
            launch_gap_us=Stats(median=5.4, p10=4.9, p90=7.8, n=5275),
            launch_api_us=1411.0,
            kernel_us=Stats(median=3.1, p10=2.2, p90=6.0, n=5300),
        ),
        replay=ReplayProfile(
            step_us=Stats(median=796.0, p10=790.2, p90=811.9, n=25),
            graph_nodes=214,
            instantiate_us=1934.5,
            pool_bytes=48_234_496,
            capture_us=2210.0,
            node_types={"kernel": 212, "memcpy": 2},
        ),
        speedup=Speedup(median=2.3156, low=2.2741, high=2.3522),
        breakeven_replays=1.85,
        predicted_speedup=2.41,
        validation=Validation(calls_compared=8, matches=8, max_abs_diff=0.0),
        hazards=[
            hazard(
                "frozen-scalar",
                "argument `temperature` changed between calls (0.7 -> 0.9); replay keeps 0.7",
                decode,
                42,
                details={"snippet": [[40, "def step(tokens, cache, temperature):"], [41, "    logits = model(tokens, cache)"], [42, "    logits = logits / temperature"], [43, "    return logits.softmax(-1)"]]},
            ),
            hazard(
                "dynamic-shape",
                "argument `tokens` dim 1 took 7 sizes between 1 and 96",
                decode,
                40,
            ),
            hazard(
                "reallocated-input",
                "argument `cache` is a new allocation each call; copying it into the static buffer costs 12.0 µs",
                decode,
                40,
            ),
        ],
        buckets=measured_plan(),
        run=RunInfo(complete=True, cause=None, script_exit=0, target_calls=64, wall_s=21.4, phases_s={"eager": 4.1, "replay": 2.2}),
        notes=["Timing on a shared GPU: other processes were running (nvidia-smi)."],
        timeline=_timeline(),
    )


def not_capturable(root: Path = ROOT) -> Report:
    """A training step whose `.item()` invalidates the capture."""
    train = str(root / "train.py")
    base = graphs_help(root)
    return dataclasses.replace(
        base,
        script=train,
        target="train_step",
        verdict="not-capturable",
        replay=None,
        speedup=None,
        breakeven_replays=None,
        predicted_speedup=3.1,
        validation=None,
        buckets=None,
        notes=[],
        hazards=[
            hazard(
                "hidden-sync",
                "`loss.item()` synchronises with the GPU (cudaErrorStreamCaptureInvalidated at capture)",
                train,
                17,
                details={"function": "train_step", "code": "    if loss.item() > 1e3:", "snippet": [[16, "    loss = criterion(out, y)"], [17, "    if loss.item() > 1e3:"], [18, "        raise RuntimeError('diverged')"]]},
            ),
            hazard("capture-failed", "capture failed: operation failed due to a previous error during capture", train, 17),
        ],
        timeline=Timeline(eager=base.timeline.eager, replay=[]) if base.timeline else None,
    )


def bare(root: Path = ROOT) -> Report:
    """A worker that died before measuring anything: None everywhere."""
    return Report(
        schema_version=SCHEMA_VERSION,
        launchprof_version="0.1.0",
        created="2025-11-28T14:05:00Z",
        machine=Machine(gpu=None, driver=None, cuda=None, torch=None, python="3.12.3"),
        script=str(root / "decode.py"),
        target=None,
        verdict="eager-only",
        eager=None,
        replay=None,
        speedup=None,
        breakeven_replays=None,
        predicted_speedup=None,
        validation=None,
        hazards=[],
        buckets=None,
        run=RunInfo(complete=False, cause="the worker died with SIGSEGV before the first call", script_exit=None, target_calls=0, wall_s=None),
    )


def crashed(root: Path = ROOT) -> Report:
    """The script died (CUDA OOM) after the eager timing, before profiling and capture."""
    eager = EagerProfile(step_us=Stats(median=1843.2, p10=1820.5, p90=1901.7, n=11), kernels_per_step=None, gpu_busy_us=None, gpu_idle_fraction=None, launch_gap_us=None)
    return dataclasses.replace(
        bare(root),
        machine=H200,
        target="step",
        eager=eager,
        run=RunInfo(complete=False, cause="the script raised torch.OutOfMemoryError: CUDA out of memory", script_exit=1, target_calls=11, wall_s=3.2),
    )


def lint(root: Path = ROOT) -> Report:
    """`launchprof lint` over the training script: static findings, nothing measured."""
    train = str(root / "train.py")
    return dataclasses.replace(
        bare(root),
        script=str(root),
        target="train_step",
        verdict="static-only",
        mode="lint",
        run=None,
        hazards=[
            hazard("hidden-sync", "`loss.item()` copies a GPU value to the host", train, 17, source="static", details={"code": "    if loss.item() > 1e3:"}),
            hazard("unjoined-stream", "stream `side` forks from the step and never rejoins it", train, 24, source="static", details={"code": "    with torch.cuda.stream(side):"}),
            hazard("rng-state", "`np.random.rand` inside the target: replay repeats the captured numbers", str(root / "data.py"), 9, source="static"),
        ],
    )


BUILDERS = {"graphs-help": graphs_help, "not-capturable": not_capturable, "crashed": crashed, "bare": bare, "lint": lint}


def recorded_reports() -> dict[str, Report]:
    """Sessions recorded on real GPUs, committed as ``tests/data/*.report.json``."""
    return {p.name: load_report(p) for p in sorted(DATA.glob("*.report.json"))}


def all_reports(root: Path = ROOT) -> dict[str, Report]:
    """Every built report and every recorded one, by name, for parametrized tests."""
    return {name: build(root) for name, build in BUILDERS.items()} | recorded_reports()


def report_ids() -> list[str]:
    """Names for ``pytest.mark.parametrize`` (collected once, at import of the test module)."""
    return list(BUILDERS) + [p.name for p in sorted(DATA.glob("*.report.json"))]
