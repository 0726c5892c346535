"""The worker's event log, parsed into one immutable record the analysis reads.

Everything after this point runs in the CLI process without torch: hazard rules,
statistics and rendering work the same on a CI runner from recorded events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    machine: dict[str, Any] | None = None
    environment_problem: str | None = None
    target: dict[str, Any] | None = None
    target_problem: str | None = None
    call_site: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    mutations: dict[str, list[str]] = field(default_factory=dict)
    eager_wall_us: list[float] = field(default_factory=list)
    eager_gpu_us: list[float] = field(default_factory=list)
    # Eager calls timed between replays (same period of the run as the replays).
    interleaved_wall_us: list[float] = field(default_factory=list)
    replay_wall_us: list[float] = field(default_factory=list)
    replay_gpu_us: list[float] = field(default_factory=list)
    traces: dict[str, str] = field(default_factory=dict)
    probe: dict[str, Any] | None = None
    capture: dict[str, Any] | None = None
    validations: list[dict[str, Any]] = field(default_factory=list)
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    state_reallocs: list[dict[str, Any]] = field(default_factory=list)
    plan_end: dict[str, Any] | None = None
    script_end: dict[str, Any] | None = None
    worker_end: dict[str, Any] | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    internal_error: str | None = None
    # Filled by the analysis from the eager trace: kernel names per profiled call.
    kernel_sequences: list[list[str]] = field(default_factory=list)

    @property
    def target_calls(self) -> int:
        if self.script_end and self.script_end.get("calls") is not None:
            return int(self.script_end["calls"])
        return len(self.calls)

    def with_sequences(self, sequences: list[list[str]]) -> Evidence:
        return dataclasses.replace(self, kernel_sequences=sequences)


def parse_events(events: list[dict[str, Any]]) -> Evidence:
    data: dict[str, Any] = {
        "calls": [],
        "eager_wall_us": [],
        "eager_gpu_us": [],
        "interleaved_wall_us": [],
        "replay_wall_us": [],
        "replay_gpu_us": [],
        "traces": {},
        "validations": [],
        "fallbacks": [],
        "state_reallocs": [],
        "phases": [],
        "notes": [],
    }
    for e in events:
        kind = e.get("type")
        if kind == "machine":
            data["machine"] = e.get("machine")
        elif kind == "environment":
            data["environment_problem"] = e.get("problem")
        elif kind == "target":
            data["target"] = {k: v for k, v in e.items() if k not in ("type", "t")}
        elif kind == "target-problem":
            data["target_problem"] = e.get("problem")
        elif kind == "call-site":
            data["call_site"] = {k: v for k, v in e.items() if k not in ("type", "t")}
        elif kind == "call":
            data["calls"].append(e)
        elif kind == "mutations":
            data["mutations"] = {"args": e.get("args", []), "state": e.get("state", [])}
        elif kind == "eager-timing":
            data["eager_wall_us"].append(e["wall_us"])
            data["eager_gpu_us"].append(e["gpu_us"])
            if e.get("phase") == "interleaved":
                data["interleaved_wall_us"].append(e["wall_us"])
        elif kind == "replay-timing":
            data["replay_wall_us"].append(e["wall_us"])
            data["replay_gpu_us"].append(e["gpu_us"])
        elif kind == "validation":
            data["validations"].append(e)
        elif kind == "trace":
            data["traces"][e.get("what", "eager")] = e["path"]
        elif kind == "probe":
            data["probe"] = e
        elif kind == "capture":
            data["capture"] = e
        elif kind == "fallback":
            data["fallbacks"].append(e)
        elif kind == "state-realloc":
            data["state_reallocs"].append(e)
        elif kind == "plan-end":
            data["plan_end"] = e
        elif kind == "script-end":
            data["script_end"] = e
        elif kind == "worker-end":
            data["worker_end"] = e
        elif kind == "phase":
            data["phases"].append(e)
        elif kind == "internal-error":
            data["internal_error"] = e.get("error")
            data["notes"].append(f"launchprof internal error (the measurement stopped there): {e.get('error')}")
        elif kind == "note":
            data["notes"].append(str(e.get("text")))
    return Evidence(**data)
