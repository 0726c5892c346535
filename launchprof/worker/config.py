"""What the CLI tells the worker to do, passed as a JSON file."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from launchprof.common.bucket_rule import DEFAULT_MEMORY_BYTES

# Exit status the worker uses when the environment (torch, CUDA) is unusable.
WORKER_ENV_EXIT = 86


@dataclass(frozen=True)
class WorkerConfig:
    script: str
    script_args: list[str]
    target: str | None
    events_path: str
    trace_path: str
    repeat: int = 50  # timed samples of each kind (eager, replay, clone) in the bursts
    warmup: int = 3
    profile_calls: int = 3
    validations: int = 4
    calibrate: bool = True  # measure a quick device profile first if none is cached
    buckets: list[int] | None = None  # --buckets: capture sizes to measure (None: the default rule)
    bucket_memory: int = DEFAULT_MEMORY_BYTES  # --bucket-memory: limit of the buckets' shared pool
    ranks: int = 0  # --nproc-per-node: each rank writes its own files (launchprof.ranks.worker_side)
    compare: tuple[str, ...] = ()  # --compare: "compile" also measures torch.compile
    compile_timeout: float = 300.0  # --compile-timeout, seconds per torch.compile mode
    compile_rounds: int = 1  # --compile-rounds: compiles of each mode (dynamo reset each time)
    run_to_end: bool = False  # --run-to-end: no stop once the measurement is complete (worker/early_stop.py)
    # torch.profiler on the eager calls: "auto" (only where a figure needs it:
    # worker/profiler_choice.py), "kernels" (--kernels) or "save-trace" (--save-trace).
    profiler: str = "auto"

    def to_file(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def from_file(cls, path: Path) -> WorkerConfig:
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))


# The plan's call schedule (launchprof.worker.plan). The reported timings come from the
# bursts, which run inside one call, so the plan itself needs few calls of the target:
# - PRE_CAPTURE_CALLS eager calls timed in the loop: an eager figure (and recorded
#   argument sets for eager-only bursts) if capture fails;
# - IN_LOOP_CALLS timed in-loop eager and replay calls each after capture: fallback
#   evidence if the bursts cannot run, and the calls whose arguments the bursts record.
PRE_CAPTURE_CALLS = 10
IN_LOOP_CALLS = 10
# Validations counted towards a complete plan: the capture call itself, the first replay
# call, the one halfway through the in-loop calls.
PLAN_VALIDATIONS = 3


def pre_capture_calls(repeat: int) -> int:
    """Eager calls timed in the loop before capture (``repeat`` is served by the bursts)."""
    return min(PRE_CAPTURE_CALLS, max(3, repeat))


def in_loop_calls(repeat: int) -> int:
    """Eager and replay calls each timed in the loop after capture."""
    return min(IN_LOOP_CALLS, max(3, repeat))


def plan_size(config: WorkerConfig) -> int:
    """Calls of the target a complete measurement needs: warm-up, pre-capture eager,
    profiled calls, one probe, one capture (also the first validation), the in-loop eager
    and replay calls, and the validations after capture (each one call)."""
    validations_after_capture = min(config.validations, PLAN_VALIDATIONS) - 1
    return (
        config.warmup
        + pre_capture_calls(config.repeat)
        + config.profile_calls
        + 1
        + 1
        + 2 * in_loop_calls(config.repeat)
        + validations_after_capture
    )
