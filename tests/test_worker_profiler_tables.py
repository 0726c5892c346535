"""The profiler-table writer: fake kineto events on CPU, a real CPU profiler run, and on a
GPU the same table as the full Chrome-trace export."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from launchprof.common.trace_tables import gpu_table, launch_api_table
from launchprof.worker.profiler_tables import chrome_rows, new_profile, write_table  # noqa: E402


def load_trace(path: Path) -> dict:
    """A Chrome trace file, gzipped or not, as the run file stores it."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@dataclass
class FakeEvent:
    """The accessors of torch's _KinetoEvent that the writer uses."""

    kind: str
    label: str
    start: int
    dur: int
    corr: int
    resource: int = 0
    device: int = 0
    thread: int = 7
    annotation: bool = False

    def activity_type(self) -> str:
        return self.kind

    def is_user_annotation(self) -> bool:
        return self.annotation

    def name(self) -> str:
        return self.label

    def start_ns(self) -> int:
        return self.start

    def duration_ns(self) -> int:
        return self.dur

    def correlation_id(self) -> int:
        return self.corr

    def device_resource_id(self) -> int:
        return self.resource

    def device_index(self) -> int:
        return self.device

    def start_thread_id(self) -> int:
        return self.thread


FAKE = [
    FakeEvent("user_annotation", "launchprof/call0", 1_000_000, 50_000, 1, annotation=True),
    FakeEvent("cpu_op", "aten::add", 1_001_000, 10_000, 2),
    FakeEvent("cuda_runtime", "cudaLaunchKernel", 1_002_000, 4_000, 11),
    FakeEvent("cuda_driver", "cuLaunchKernelEx", 1_010_000, 4_000, 12),
    FakeEvent("kernel", "add_kernel", 1_020_000, 2_000, 11, resource=7),
    FakeEvent("kernel", "gemm", 1_030_000, 8_000, 12, resource=7),
    FakeEvent("gpu_memcpy", "Memcpy HtoD", 1_040_000, 1_000, 13, resource=9),
    FakeEvent("user_annotation", "launchprof/call1", 1_100_000, 50_000, 20, annotation=True),
    FakeEvent("cuda_runtime", "cudaLaunchKernel", 1_101_000, 4_000, 21),
    FakeEvent("kernel", "add_kernel", 1_120_000, 2_000, 21, resource=7),
]


def test_rows_keep_only_the_categories_the_analysis_reads():
    rows = chrome_rows(FAKE, base_ns=1_000_000)
    assert {r["cat"] for r in rows} == {"user_annotation", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy"}
    assert all(r["ph"] == "X" for r in rows)
    kernel = next(r for r in rows if r["name"] == "gemm")
    assert kernel["ts"] == 30.0 and kernel["dur"] == 8.0
    assert kernel["args"] == {"correlation": 12, "stream": 7, "device": 0}
    runtime = next(r for r in rows if r["cat"] == "cuda_runtime")
    assert "stream" not in runtime["args"] and runtime["args"]["correlation"] == 11


def test_trace_module_reads_the_rows(tmp_path):
    path = tmp_path / "t.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump({"traceEvents": chrome_rows(FAKE, base_ns=1_000_000)}, fh)
    gpu = gpu_table(load_trace(path))
    assert sorted(gpu["name"]) == ["Memcpy HtoD", "add_kernel", "add_kernel", "gemm"]
    # each kernel belongs to the call whose window holds its launch
    assert dict(zip(gpu["name"] + gpu["start_us"].astype(str), gpu["call"], strict=True))["add_kernel120.0"] == 1
    assert set(gpu[gpu["name"] == "gemm"]["stream"]) == {7}
    assert len(launch_api_table(load_trace(path))) >= 3


class OldTorchEvent(FakeEvent):
    def activity_type(self) -> int:  # type: ignore[override]
        return 5


def test_unexpected_event_objects_fall_back_to_the_full_export(tmp_path):
    class Prof:
        class profiler:  # noqa: N801 - mirrors torch.profiler.profile.profiler
            class kineto_results:  # noqa: N801
                @staticmethod
                def events():
                    return [OldTorchEvent("kernel", "k", 0, 1, 1)]

        exported: list[str] = []

        def export_chrome_trace(self, path: str) -> None:
            self.exported.append(path)
            Path(path).write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "full", "ts": 0, "dur": 1, "args": {}}]}))

    prof = Prof()
    name = write_table(prof, tmp_path, "eager")
    assert name == "trace-eager.json.gz" and prof.exported
    assert load_trace(tmp_path / name)["traceEvents"][0]["name"] == "full"
    assert not (tmp_path / "trace-eager.json").exists()


def _profiled(activities: list) -> object:
    from torch.profiler import profile, record_function

    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.ones(256, device=device)
    with profile(activities=activities) as prof:
        for i in range(3):
            with record_function(f"launchprof/call{i}"):
                y = (x * 2 + 1).sin()
                if device == "cuda":
                    torch.cuda.synchronize()
    del y
    return prof


def test_real_cpu_profiler_run_has_the_call_annotations(tmp_path):
    from torch.profiler import ProfilerActivity

    name = write_table(_profiled([ProfilerActivity.CPU]), tmp_path, "eager")
    assert name == "trace-eager.json.gz"
    rows = load_trace(tmp_path / name)["traceEvents"]
    calls = sorted(r["name"] for r in rows if r["cat"] == "user_annotation")
    assert calls == ["launchprof/call0", "launchprof/call1", "launchprof/call2"]
    starts = [r["ts"] for r in rows if r["cat"] == "user_annotation"]
    assert min(starts) >= 0 and all(r["dur"] >= 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_fast_table_matches_the_full_export_on_a_gpu(tmp_path):
    from torch.profiler import ProfilerActivity

    prof = _profiled([ProfilerActivity.CPU, ProfilerActivity.CUDA])
    fast = load_trace(tmp_path / write_table(prof, tmp_path, "eager"))
    assert fast.get("launchprof", {}).get("source") == "kineto_results", "the fast path fell back to the export"
    prof.export_chrome_trace(str(tmp_path / "full.json"))
    full = load_trace(tmp_path / "full.json")
    a, b = gpu_table(fast), gpu_table(full)
    assert len(a) == len(b) > 0
    assert sorted(a["name"]) == sorted(b["name"])
    assert list(a.groupby("call").size()) == list(b.groupby("call").size())
    assert sorted(a["stream"].astype(int)) == sorted(b["stream"].astype(int))


@dataclass
class Torch211Event:
    """torch 2.11's _KinetoEvent (seen on the H200): no activity_type(); a device type."""

    gpu: bool
    label: str
    start: int
    dur: int
    corr: int
    resource: int = 0
    annotation: bool = False

    def device_type(self) -> str:
        return "DeviceType.CUDA" if self.gpu else "DeviceType.CPU"

    def is_user_annotation(self) -> bool:
        return self.annotation

    def name(self) -> str:
        return self.label

    def start_ns(self) -> int:
        return self.start

    def duration_ns(self) -> int:
        return self.dur

    def correlation_id(self) -> int:
        return self.corr

    def device_resource_id(self) -> int:
        return self.resource

    def device_index(self) -> int:
        return 0

    def start_thread_id(self) -> int:
        return 1


def test_events_without_activity_type_are_classified_from_device_and_name():
    events = [
        Torch211Event(False, "launchprof/call0", 0, 9_000, 1, annotation=True),
        Torch211Event(True, "launchprof/call0", 0, 9_000, 1, resource=7, annotation=True),  # GPU-side copy
        Torch211Event(False, "aten::add", 100, 500, 4),
        Torch211Event(False, "cudaLaunchKernel", 200, 300, 22),
        Torch211Event(False, "cuLaunchKernelEx", 600, 300, 23),
        Torch211Event(False, "Activity Buffer Request", 0, 5, 3),
        Torch211Event(True, "void add_kernel<float>(float*)", 1_000, 2_000, 22, resource=7),
        Torch211Event(True, "gemm", 3_000, 2_000, 23, resource=7),
        Torch211Event(True, "Memcpy DtoD (Device -> Device)", 6_000, 1_000, 30, resource=7),
        Torch211Event(True, "Memset (Device)", 7_500, 500, 31, resource=7),
        Torch211Event(True, "Stream Sync", 8_000, 100, 32, resource=7),
    ]
    cats = {(r["name"], r["cat"]) for r in chrome_rows(events, base_ns=0)}
    assert cats == {
        ("launchprof/call0", "user_annotation"),
        ("cudaLaunchKernel", "cuda_runtime"),
        ("cuLaunchKernelEx", "cuda_driver"),
        ("void add_kernel<float>(float*)", "kernel"),
        ("gemm", "kernel"),
        ("Memcpy DtoD (Device -> Device)", "gpu_memcpy"),
        ("Memset (Device)", "gpu_memset"),
    }



def test_launchprofs_sessions_do_not_print_the_cycle_warning():
    """torch 2.11 warned "Profiler clears events at the end of each cycle" into the user's
    output for every session without a schedule (pytorch/pytorch#180387). Here the
    warning is raised on purpose at the session's start: launchprof's session keeps it
    out, a plain torch session lets it through, and other warnings still pass."""
    import warnings

    import torch.profiler

    from launchprof.worker.profiler_tables import CYCLE_WARNING, _quiet

    class Noisy(torch.profiler.profile):
        def start(self) -> None:
            warnings.warn(CYCLE_WARNING + ". Only events from the current cycle will be reported.", UserWarning)
            warnings.warn("something else", UserWarning)
            super().start()

    def shown(prof: torch.profiler.profile) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with prof:
                torch.ones(2).add_(1)
        return [str(w.message) for w in caught]

    plain = shown(Noisy(activities=[torch.profiler.ProfilerActivity.CPU]))
    assert any(CYCLE_WARNING in m for m in plain)
    quiet = shown(_quiet(Noisy)(activities=[torch.profiler.ProfilerActivity.CPU]))
    assert not any(CYCLE_WARNING in m for m in quiet) and "something else" in quiet
    assert type(new_profile()) is _quiet(torch.profiler.profile) and new_profile(with_stack=True).with_stack


def test_on_gpu_reads_torch_enum_and_plain_names_alike():
    """The fast path (torch's DeviceType compared as an enum) and the fallback (its name)
    agree: a real CPU profiler event is not on the GPU; stand-ins named like the enum are
    told apart by their name."""
    torch = pytest.importorskip("torch")
    from launchprof.worker.profiler_tables import on_gpu

    class Named:
        def __init__(self, kind):
            self.kind = kind

        def device_type(self):
            return self.kind

    assert on_gpu(Named(torch.autograd.DeviceType.CUDA)) and not on_gpu(Named(torch.autograd.DeviceType.CPU))
    assert on_gpu(Named("DeviceType.CUDA")) and not on_gpu(Named("DeviceType.CPU"))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.ones(8).add_(1)
    events = prof.profiler.kineto_results.events()
    assert events and not any(on_gpu(e) for e in events)
