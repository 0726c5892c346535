"""Machine metadata: every probe read-only and optional, with fakes for nvidia-smi and NVML."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

import launchprof.model.machine as machine

OWN_PID = 4242


class FakeSmi:
    """Stands in for ``nvidia-smi``: answers by query, records every argument list it got."""

    def __init__(self, answers: dict[str, str], fail: type[BaseException] | None = None) -> None:
        self.answers, self.fail, self.calls = answers, fail, []

    def __call__(self, argv: list[str], **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
        self.calls.append(argv)
        assert kw.get("timeout") == machine.SMI_TIMEOUT_S  # a hung driver must not hang the worker
        if self.fail is not None:
            raise self.fail(argv, machine.SMI_TIMEOUT_S) if self.fail is subprocess.TimeoutExpired else self.fail()
        query = next(a for a in argv if a.startswith("--query"))
        return subprocess.CompletedProcess(argv, 0, stdout=self.answers[query], stderr="")


@pytest.fixture
def no_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails


def _smi(monkeypatch: pytest.MonkeyPatch, fake: FakeSmi | None) -> None:
    monkeypatch.setattr(machine.shutil, "which", lambda name: None if fake is None else "/usr/bin/nvidia-smi")
    if fake is not None:
        monkeypatch.setattr(machine.subprocess, "run", fake)


SMI_ANSWERS = {
    "--query-gpu=clocks.sm,clocks.mem,memory.total": "1980, 3201, 143771\n",
    "--query-compute-apps=pid": f"{OWN_PID}\n",
    "--query-gpu=driver_version": "580.159.04\n",
}


def test_gpu_state_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    fake = FakeSmi(dict(SMI_ANSWERS))
    _smi(monkeypatch, fake)
    state = machine.gpu_state("GPU-abc", own_pid=OWN_PID)
    assert state == {"driver": "580.159.04", "gpu_clocks_mhz": {"sm": 1980, "mem": 3201}, "gpu_memory_bytes": 143771 * 2**20, "gpu_other_processes": False}
    # only our own GPU is asked about, and only with read-only queries
    assert all(argv[-2:] == ["-i", "GPU-abc"] for argv in fake.calls if "--query-gpu=driver_version" not in argv)
    assert all(a.startswith(("--query", "--format", "-i", "GPU-", "/usr/bin")) for argv in fake.calls for a in argv)


def test_other_processes_exclude_our_pid(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    _smi(monkeypatch, FakeSmi(SMI_ANSWERS | {"--query-compute-apps=pid": f"{OWN_PID}\n999\n"}))
    assert machine.smi_other_processes("GPU-abc", OWN_PID) is True
    _smi(monkeypatch, FakeSmi(SMI_ANSWERS | {"--query-compute-apps=pid": ""}))
    assert machine.smi_other_processes("GPU-abc", OWN_PID) is False


def test_several_gpus_without_uuid_give_no_clocks(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    two = "1980, 3201, 143771\n345, 3201, 143771\n"
    _smi(monkeypatch, FakeSmi(SMI_ANSWERS | {"--query-gpu=clocks.sm,clocks.mem,memory.total": two}))
    assert machine.smi_gpu_state(None) == (None, None)


def test_unsupported_fields_are_none(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    _smi(monkeypatch, FakeSmi(SMI_ANSWERS | {"--query-gpu=clocks.sm,clocks.mem,memory.total": "[N/A], [N/A], 81559\n"}))
    assert machine.smi_gpu_state("GPU-abc") == (None, 81559 * 2**20)


@pytest.mark.parametrize("failure", [subprocess.TimeoutExpired, subprocess.CalledProcessError, FileNotFoundError, None])
def test_every_smi_failure_is_soft(monkeypatch: pytest.MonkeyPatch, no_nvml: None, failure: type[BaseException] | None) -> None:
    if failure is subprocess.CalledProcessError:
        def boom(argv: list[str], **kw) -> None:  # type: ignore[no-untyped-def]
            raise subprocess.CalledProcessError(9, argv)

        monkeypatch.setattr(machine.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
        monkeypatch.setattr(machine.subprocess, "run", boom)
    else:
        _smi(monkeypatch, None if failure is None else FakeSmi({}, fail=failure))
    assert machine.gpu_state("GPU-abc", own_pid=OWN_PID) == {"driver": None, "gpu_clocks_mhz": None, "gpu_memory_bytes": None, "gpu_other_processes": None}


def _fake_nvml(pids: list[int]) -> types.ModuleType:
    nvml = types.ModuleType("pynvml")
    nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM = 1, 2  # type: ignore[attr-defined]
    nvml.nvmlInit = lambda: None  # type: ignore[attr-defined]
    nvml.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    nvml.nvmlSystemGetDriverVersion = lambda: b"580.159.04"  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetCount = lambda: 8  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetHandleByUUID = lambda uuid: ("handle", uuid)  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetClockInfo = lambda h, which: {1: 1755, 2: 3201}[which]  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=150_754_820_096)  # type: ignore[attr-defined]

    def processes(h: object) -> list[types.SimpleNamespace]:
        return [types.SimpleNamespace(pid=p) for p in pids]

    nvml.nvmlDeviceGetComputeRunningProcesses = processes  # type: ignore[attr-defined]
    return nvml


def test_nvml_preferred_and_nvidia_smi_not_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([OWN_PID, 77]))
    fake = FakeSmi({})
    _smi(monkeypatch, fake)
    state = machine.gpu_state("GPU-abc", own_pid=OWN_PID)
    assert state == {"driver": "580.159.04", "gpu_clocks_mhz": {"sm": 1755, "mem": 3201}, "gpu_memory_bytes": 150_754_820_096, "gpu_other_processes": True}
    assert fake.calls == []


def test_cpu_model_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  9654 96-Core Processor\n", encoding="utf-8")
    assert machine.cpu_model(info) == "AMD EPYC 9654 96-Core Processor"


def test_collect_machine_on_cpu_is_plain_json(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    _smi(monkeypatch, None)
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (3.5, 2.0, 1.0))
    info = machine.collect_machine()
    data = json.loads(json.dumps(dataclasses.asdict(info)))  # what the worker's machine event writes
    assert data["load_avg"] == 3.5 and data["cpu_cores"] >= 1 and data["python"]
    assert data["gpu"] is None and data["gpu_clocks_mhz"] is None and data["gpu_other_processes"] is None
    assert set(data) == {f.name for f in dataclasses.fields(machine.Machine)}


def test_collect_machine_with_a_fake_gpu(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    _smi(monkeypatch, FakeSmi(dict(SMI_ANSWERS)))
    monkeypatch.setattr(machine, "torch_device", lambda: {"gpu": "NVIDIA H200", "torch": "2.11.0", "cuda": "13.0", "gpu_memory_bytes": 150_754_820_096, "uuid": "GPU-abc"})
    monkeypatch.setattr(machine.os, "getpid", lambda: OWN_PID)
    info = machine.collect_machine()
    assert (info.gpu, info.driver, info.gpu_memory_bytes, info.gpu_clocks_mhz, info.gpu_other_processes) == (
        "NVIDIA H200", "580.159.04", 150_754_820_096, {"sm": 1980, "mem": 3201}, False
    )


# --- the probe: the same answer, with the queries beside other work ---------------------------

FAKE_DEVICE = {"gpu": "NVIDIA H200", "torch": "2.11.0", "cuda": "13.0", "gpu_memory_bytes": 150_754_820_096, "uuid": "GPU-abc"}


def _sequential_machine() -> machine.Machine:
    """What collect_machine answered when it asked torch, then NVML and nvidia-smi one after
    another, and had pydantic check the values as a report's machine is checked."""
    from launchprof.model.records import adapter

    dev = machine.torch_device()
    gpu = machine.gpu_state(dev.get("uuid")) if dev.get("gpu") else {}
    return adapter(machine.Machine).validate_python(dict(
        gpu=dev.get("gpu"), driver=gpu.get("driver"), cuda=dev.get("cuda"), torch=dev.get("torch"),
        python=machine.platform.python_version(), cpu_model=machine.cpu_model(), cpu_cores=machine.cpu_cores(),
        load_avg=machine.load_avg(), gpu_memory_bytes=dev.get("gpu_memory_bytes") or gpu.get("gpu_memory_bytes"),
        gpu_clocks_mhz=gpu.get("gpu_clocks_mhz"), gpu_other_processes=gpu.get("gpu_other_processes"),
    ))  # fmt: skip


@pytest.mark.parametrize("source", ["nvidia-smi", "nvml"])
def test_the_probe_gives_what_the_sequential_queries_gave(monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    if source == "nvml":
        monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([OWN_PID, 77]))
    else:
        monkeypatch.setitem(sys.modules, "pynvml", None)
    _smi(monkeypatch, FakeSmi(dict(SMI_ANSWERS)))
    monkeypatch.setattr(machine, "torch_device", lambda: dict(FAKE_DEVICE))
    monkeypatch.setattr(machine.os, "getpid", lambda: OWN_PID)
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (3.5, 2.0, 1.0))
    probed = machine.collect_machine()
    assert probed == _sequential_machine()
    line = json.dumps(dataclasses.asdict(probed))  # the machine event, as the worker writes it
    assert line == json.dumps(dataclasses.asdict(_sequential_machine()))
    assert type(probed.torch) is str and probed.gpu_clocks_mhz is not None and all(type(v) is float for v in probed.gpu_clocks_mhz.values())


class SlowSmi(FakeSmi):
    """nvidia-smi whose driver query says when it started; the device queries each wait for
    the other one at a barrier, so they only answer when they run at the same time."""

    def __init__(self) -> None:
        super().__init__(dict(SMI_ANSWERS))
        self.driver_asked = threading.Event()
        self.both = threading.Barrier(2, timeout=10)

    def __call__(self, argv: list[str], **kw):  # type: ignore[no-untyped-def]
        if "--query-gpu=driver_version" in argv:
            self.driver_asked.set()
        else:
            self.both.wait()
        return super().__call__(argv, **kw)


def test_the_driver_is_asked_before_the_device_and_the_device_queries_run_side_by_side(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    fake = SlowSmi()
    _smi(monkeypatch, fake)
    monkeypatch.setattr(machine, "torch_device", lambda: dict(FAKE_DEVICE))
    monkeypatch.setattr(machine.os, "getpid", lambda: OWN_PID)
    probe = machine.MachineProbe()
    assert fake.driver_asked.wait(10)  # with no call to read_device yet: torch would still be importing
    probe.read_device()
    got = probe.machine()
    assert (got.driver, got.gpu_clocks_mhz, got.gpu_memory_bytes, got.gpu_other_processes) == ("580.159.04", {"sm": 1980.0, "mem": 3201.0}, 150_754_820_096, False)
    assert not fake.both.broken


def test_without_a_gpu_nothing_waits_for_the_driver(monkeypatch: pytest.MonkeyPatch, no_nvml: None) -> None:
    release = threading.Event()

    def hung(argv: list[str], **kw):  # type: ignore[no-untyped-def]
        release.wait(30)  # a hung driver: nvidia-smi's timeout would end it
        raise subprocess.TimeoutExpired(argv, machine.SMI_TIMEOUT_S)

    monkeypatch.setattr(machine.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(machine.subprocess, "run", hung)
    monkeypatch.setattr(machine, "torch_device", lambda: {"torch": "2.11.0"})
    t0 = time.perf_counter()
    try:
        got = machine.collect_machine()
    finally:
        release.set()
    assert time.perf_counter() - t0 < 10 and got.gpu is None and got.driver is None and got.gpu_other_processes is None
