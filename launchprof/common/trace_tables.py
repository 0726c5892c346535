"""torch.profiler (Kineto/CUPTI) Chrome traces -> a pandas table of GPU activity per call.

The worker marks each profiled call with ``record_function("launchprof/callN")``. A GPU
activity belongs to the call whose CPU window holds the runtime API call that launched
it (matched by correlation id). From that table come kernels per step, GPU busy time,
idle gaps between kernels and host launch time: the numbers that say whether launch
cost dominates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
# cuBLAS and friends launch through the driver API (cuLaunchKernelEx), not the runtime.
RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver")
LAUNCH_APIS = ("LaunchKernel", "Memcpy", "Memset", "GraphLaunch", "LaunchCooperative")
_CALL_PREFIX = "launchprof/call"


def _complete_events(trace: dict[str, Any]) -> pd.DataFrame:
    """Every complete ("X") event as one frame: name, cat, ts, dur, correlation, stream."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    frame = pd.DataFrame(
        {
            "name": [str(e.get("name", "")) for e in events],
            "cat": [str(e.get("cat", "")) for e in events],
            "ts": [float(e.get("ts", 0.0)) for e in events],
            "dur": [float(e.get("dur", 0.0)) for e in events],
            "correlation": [(e.get("args") or {}).get("correlation") for e in events],
            "stream": [(e.get("args") or {}).get("stream", e.get("tid")) for e in events],
        }
    )
    # An empty trace gives float columns; names and categories stay strings either way.
    return frame.astype({"name": str, "cat": str, "ts": float, "dur": float})


def call_windows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per ``launchprof/callN`` annotation: call index, start, end; in time order."""
    marks = frame[(frame["cat"] == "user_annotation") & frame["name"].str.startswith(_CALL_PREFIX)]
    return pd.DataFrame(
        {
            "call": marks["name"].str[len(_CALL_PREFIX) :].astype(int).to_numpy(),
            "start": marks["ts"].to_numpy(),
            "end": (marks["ts"] + marks["dur"]).to_numpy(),
        }
    ).sort_values("start", kind="stable", ignore_index=True)


def call_of(ts: pd.Series, windows: pd.DataFrame) -> pd.Series:
    """The call whose window holds each timestamp (an interval lookup), else NaN; with no
    windows at all (a whole-script trace), everything is call 0."""
    if windows.empty:
        return pd.Series(0.0, index=ts.index)
    starts, ends = windows["start"].to_numpy(), windows["end"].to_numpy()
    values = ts.to_numpy(dtype=float, na_value=np.nan)
    idx = np.searchsorted(starts, values, side="right") - 1
    inside = (idx >= 0) & ~np.isnan(values)
    inside[inside] &= values[inside] <= ends[idx[inside]]
    calls = np.where(inside, windows["call"].to_numpy()[np.clip(idx, 0, None)], np.nan)
    return pd.Series(calls, index=ts.index)


def gpu_table(trace: dict[str, Any]) -> pd.DataFrame:
    """One row per GPU activity: name, kind, start/end (µs), stream, correlation, call.

    A GPU activity belongs to the call whose window holds the runtime API call that
    launched it: a join on the correlation id, then an interval lookup."""
    frame = _complete_events(trace)
    gpu = frame[frame["cat"].isin(GPU_CATEGORIES)].copy()
    runtime = frame[frame["cat"].isin(RUNTIME_CATEGORIES) & frame["correlation"].notna()]
    launch_ts = runtime.drop_duplicates("correlation").set_index("correlation")["ts"]
    gpu["launch_ts"] = gpu["correlation"].map(launch_ts)
    df = pd.DataFrame(
        {
            "name": gpu["name"],
            "kind": gpu["cat"].map(GPU_CATEGORIES),
            "start_us": gpu["ts"],
            "dur_us": gpu["dur"],
            "stream": gpu["stream"],
            "correlation": gpu["correlation"],
            "call": call_of(gpu["launch_ts"], call_windows(frame)),
        }
    )
    df["end_us"] = df["start_us"] + df["dur_us"]
    return df.sort_values("start_us", kind="stable").reset_index(drop=True)


def launch_api_table(trace: dict[str, Any]) -> pd.DataFrame:
    """Host-side launch API calls (cudaLaunchKernel & co) with the call they belong to."""
    frame = _complete_events(trace)
    pattern = "|".join(LAUNCH_APIS)
    apis = frame[frame["cat"].isin(RUNTIME_CATEGORIES) & frame["name"].str.contains(pattern, regex=True)]
    return pd.DataFrame({"name": apis["name"], "dur_us": apis["dur"], "call": call_of(apis["ts"], call_windows(frame))})


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
    """One CallProfile per profiled call (a groupby over the GPU table)."""
    api_us = apis.groupby("call")["dur_us"].sum() if apis is not None and len(apis) else pd.Series(dtype=float)
    out = []
    for call, group in gpu.dropna(subset=["call"]).groupby("call", sort=True):
        group = group.sort_values("start_us", kind="stable")
        is_kernel = group["kind"] == "kernel"
        starts, ends = group["start_us"].to_numpy(), group["end_us"].to_numpy()
        busy, gaps = busy_and_gaps(starts, ends)
        out.append(
            CallProfile(
                kernels=int(is_kernel.sum()),
                memcpys=int((~is_kernel).sum()),
                busy_us=busy,
                span_us=float(ends.max() - starts.min()) if len(group) else 0.0,
                gaps_us=gaps,
                kernel_us=group.loc[is_kernel, "dur_us"].astype(float).tolist(),
                activity_us=group["dur_us"].astype(float).tolist(),
                sequence=group.loc[is_kernel, "name"].tolist(),
                launch_api_us=float(api_us.get(call, 0.0)),
            )
        )
    return out


def busy_and_gaps(starts: np.ndarray, ends: np.ndarray) -> tuple[float, list[float]]:
    """Union length of intervals, and the idle gaps between them (an interval merge:
    concurrent kernels overlap, so busy time is the union, not the sum)."""
    if len(starts) == 0:
        return 0.0, []
    order = np.argsort(starts, kind="stable")
    s, e = np.asarray(starts, dtype=float)[order], np.asarray(ends, dtype=float)[order]
    reach = np.maximum.accumulate(e)  # the furthest end seen so far
    new_block = np.concatenate(([True], s[1:] > reach[:-1]))
    block = np.cumsum(new_block) - 1
    block_start = s[new_block]
    block_end = pd.Series(reach).groupby(block).max().to_numpy()
    gaps = (block_start[1:] - block_end[:-1]).astype(float).tolist()
    return float((block_end - block_start).sum()), gaps


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
