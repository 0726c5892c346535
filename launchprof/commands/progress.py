"""Live progress for analyze, driven by the worker's events (on stderr, transient, only on
a terminal; never in reports): script start, calibration, the plan's phases, bursts."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class AnalyzeProgress:
    def __init__(self, console: Console, repeat: int, has_target: bool, stops: bool = True) -> None:
        self.repeat = repeat
        self.stops = stops  # the script is stopped once measured (not with --run-to-end)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self.task = self.progress.add_task("starting the script (importing torch, CUDA init)", total=None)
        self.eager = 0
        self.replay = 0
        self.timed = 0  # burst samples so far, all kinds
        self.burst_total: int | None = None

    def __enter__(self) -> AnalyzeProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def update(self, events: list[dict[str, Any]]) -> None:
        for e in events:
            kind = e.get("type")
            if kind == "machine":
                self.progress.update(self.task, description=f"running the script on {e['machine'].get('gpu')}")
            elif kind == "target":
                self.progress.update(self.task, description=f"waiting for calls to {e.get('name')}")
            elif kind == "eager-timing":
                self.eager += 1
                self.progress.update(self.task, description="eager calls", completed=self.eager, total=self.repeat)
            elif kind == "phase" and e.get("name") in ("profile", "probe", "capture"):
                label = {"profile": "profiling eager calls (CUPTI)", "probe": "probing for syncs", "capture": "capturing the graph"}[e["name"]]
                self.progress.update(self.task, description=label, completed=0, total=None)
            elif kind == "replay-timing":
                self.replay += 1
                self.progress.update(self.task, description="graph replays", completed=self.replay, total=self.repeat)
            elif kind == "calibration-progress":
                self.progress.update(self.task, description="measuring this GPU once for predictions", completed=float(e.get("fraction") or 0.0) * 100, total=100)
            elif kind == "calibration" and e.get("status") == "measured":
                self.progress.update(self.task, description=f"measured this GPU for predictions ({e.get('seconds', 0):.0f} s)", completed=0, total=None)
            elif kind == "timing-start":
                self.timed, self.burst_total = 0, int(e.get("target") or 0) * len(e.get("kinds") or [])
                self._burst_update()
            elif kind == "timing" and e.get("mode") == "burst":
                self.timed += len(e.get("wall_us") or [])
                self._burst_update()
            elif kind == "compile-start":
                self.progress.update(self.task, description=f"torch.compile mode={e.get('mode')}: compiling, then timing", completed=0, total=None)
            elif kind == "plan-end":
                said = "measured; stopping the script" if self.stops else "measured; the script finishes"
                self.progress.update(self.task, description=said, total=None)

    def _burst_update(self) -> None:
        self.progress.update(
            self.task,
            description="timing eager and replay back to back",
            completed=min(self.timed, self.burst_total or self.timed),
            total=self.burst_total or None,
        )
