"""The worker's configuration from analyze's options: one place for the single-GPU run
(commands/analyze.py) and the ranks under torch's launcher (commands/analyze_ranks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launchprof.worker.config import WorkerConfig


def profiler_choice(options: Any) -> str:
    """``WorkerConfig.profiler``: --kernels, else --save-trace (it exports the traces the
    profiler writes), else the worker decides (worker/profiler_choice.py)."""
    if options.kernels:
        return "kernels"
    return "save-trace" if options.save_trace is not None else "auto"


def worker_config(options: Any, rundir: Path, **extra: Any) -> WorkerConfig:
    """The fields every run shares; ``extra`` carries what only one kind of run sets."""
    return WorkerConfig(
        script=str(options.script.resolve()),
        script_args=list(options.script_args),
        target=options.target,
        events_path=str(rundir / "events.jsonl"),
        trace_path=str(rundir / "trace.json"),
        repeat=options.repeat,
        calibrate=options.calibrate,
        run_to_end=options.run_to_end,
        profiler=profiler_choice(options),
        **extra,
    )
