"""What the CLI tells the worker to do, passed as a JSON file."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

# Exit status the worker uses when the environment (torch, CUDA) is unusable.
WORKER_ENV_EXIT = 86


@dataclass(frozen=True)
class WorkerConfig:
    script: str
    script_args: list[str]
    target: str | None
    events_path: str
    trace_path: str
    repeat: int = 25
    warmup: int = 3
    profile_calls: int = 3
    validations: int = 4

    def to_file(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def from_file(cls, path: Path) -> WorkerConfig:
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))


def pre_capture_calls(repeat: int) -> int:
    """Eager calls timed before capture: enough to report an eager step if capture fails;
    after capture, eager and replay calls alternate, ``repeat`` of each."""
    return max(3, repeat // 2)


def plan_size(config: WorkerConfig) -> int:
    """Calls of the target a complete measurement needs (see launchprof.worker.measure)."""
    return config.warmup + pre_capture_calls(config.repeat) + config.profile_calls + 1 + 1 + 2 * config.repeat + min(config.validations, 3) - 1
