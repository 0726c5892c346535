"""torch.profiler (Kineto/CUPTI) Chrome traces -> a pandas table of GPU activity per call.

The worker marks each profiled call with ``record_function("launchprof/callN")``. A GPU
activity belongs to the call whose CPU window holds the runtime API call that launched
it (matched by correlation id). From that table come kernels per step, GPU busy time,
idle gaps between kernels and host launch time: the numbers that say whether launch
cost dominates.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
# cuBLAS and friends launch through the driver API (cuLaunchKernelEx), not the runtime.
RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver")
LAUNCH_APIS = ("LaunchKernel", "Memcpy", "Memset", "GraphLaunch", "LaunchCooperative")
_CALL_PREFIX = "launchprof/call"


def load_trace(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        return json.load(fh)


def gpu_table(trace: dict[str, Any]) -> pd.DataFrame:
    """One row per GPU activity: name, kind, start/end (µs), stream, call index."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    calls = _call_windows(events)
    runtime = {
        e.get("args", {}).get("correlation"): float(e["ts"])
        for e in events
        if e.get("cat") in RUNTIME_CATEGORIES and "correlation" in e.get("args", {})
    }
    rows = []
    for e in events:
        kind = GPU_CATEGORIES.get(e.get("cat", ""))
        if kind is None:
            continue
        corr = e.get("args", {}).get("correlation")
        launch_ts = runtime.get(corr)
        rows.append(
            {
                "name": e.get("name", ""),
                "kind": kind,
                "start_us": float(e["ts"]),
                "dur_us": float(e.get("dur", 0.0)),
                "stream": e.get("args", {}).get("stream", e.get("tid")),
                "correlation": corr,
                "call": _call_of(launch_ts, calls) if calls else 0,
            }
        )
    df = pd.DataFrame(rows, columns=["name", "kind", "start_us", "dur_us", "stream", "correlation", "call"])
    df["end_us"] = df["start_us"] + df["dur_us"]
    return df.sort_values("start_us", kind="stable").reset_index(drop=True)


def launch_api_table(trace: dict[str, Any]) -> pd.DataFrame:
    """Host-side launch API calls (cudaLaunchKernel & co) with the call they belong to."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    calls = _call_windows(events)
    rows = [
        {"name": e["name"], "dur_us": float(e.get("dur", 0.0)), "call": _call_of(float(e["ts"]), calls) if calls else 0}
        for e in events
        if e.get("cat") in RUNTIME_CATEGORIES and any(api in e.get("name", "") for api in LAUNCH_APIS)
    ]
    return pd.DataFrame(rows, columns=["name", "dur_us", "call"])


def _call_windows(events: list[dict[str, Any]]) -> list[tuple[int, float, float]]:
    """(index, start, end) of each ``launchprof/callN`` annotation, in time order."""
    return sorted(
        (
            (int(e["name"][len(_CALL_PREFIX) :]), float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
            for e in events
            if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(_CALL_PREFIX)
        ),
        key=lambda c: c[1],
    )


def _call_of(ts: float | None, calls: list[tuple[int, float, float]]) -> int | None:
    if ts is None:
        return None
    for index, start, end in calls:
        if start <= ts <= end:
            return index
    return None


@dataclass(frozen=True)
class CallProfile:
    """What one profiled call did on the GPU."""

    kernels: int
    memcpys: int
    busy_us: float  # union of GPU activity intervals
    span_us: float  # first start to last end
    gaps_us: list[float]  # idle time between consecutive activities
    kernel_us: list[float]
    activity_us: list[float]  # every GPU activity (kernels, copies, memsets): one graph node each
    sequence: list[str]  # kernel names in launch order
    launch_api_us: float


def per_call(gpu: pd.DataFrame, apis: pd.DataFrame | None = None) -> list[CallProfile]:
    out = []
    for call, group in gpu.dropna(subset=["call"]).groupby("call", sort=True):
        group = group.sort_values("start_us")
        kernels = group[group["kind"] == "kernel"]
        starts, ends = group["start_us"].to_numpy(), group["end_us"].to_numpy()
        busy, gaps = _busy_and_gaps(starts, ends)
        api = float(apis.loc[apis["call"] == call, "dur_us"].sum()) if apis is not None and len(apis) else 0.0
        out.append(
            CallProfile(
                kernels=int(len(kernels)),
                memcpys=int((group["kind"] != "kernel").sum()),
                busy_us=busy,
                span_us=float(ends.max() - starts.min()) if len(group) else 0.0,
                gaps_us=gaps,
                kernel_us=kernels["dur_us"].astype(float).tolist(),
                activity_us=group["dur_us"].astype(float).tolist(),
                sequence=kernels["name"].tolist(),
                launch_api_us=api,
            )
        )
    return out


def _busy_and_gaps(starts: np.ndarray, ends: np.ndarray) -> tuple[float, list[float]]:
    """Union length of intervals, and the idle gaps between them (concurrent kernels overlap)."""
    if len(starts) == 0:
        return 0.0, []
    order = np.argsort(starts, kind="stable")
    busy = 0.0
    gaps: list[float] = []
    cur_start, cur_end = starts[order[0]], ends[order[0]]
    for i in order[1:]:
        s, e = starts[i], ends[i]
        if s > cur_end:
            busy += cur_end - cur_start
            gaps.append(float(s - cur_end))
            cur_start, cur_end = s, e
        else:
            cur_end = max(cur_end, e)
    busy += cur_end - cur_start
    return float(busy), gaps


def timeline_of(gpu: pd.DataFrame, call: int = 0) -> list[dict[str, Any]]:
    """GPU activities of one call, times relative to its first start (for the HTML timeline)."""
    group = gpu[gpu["call"] == call].sort_values("start_us")
    if group.empty:
        return []
    t0 = float(group["start_us"].min())
    return [
        {"name": r.name, "start_us": float(r.start_us) - t0, "dur_us": float(r.dur_us), "kind": r.kind}
        for r in group.itertuples(index=False)
    ]
