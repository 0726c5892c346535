"""Machine metadata stamped on every run, report and device profile: the one place it is collected.

Why so much of it: a step time is only comparable with another measured on the same kind
of machine in the same state. ``compare`` warns when the GPU, driver, torch or CPU differ,
or when the host was loaded (load average above the core count) or other processes were
using the GPU, so the metadata records both the hardware and its state at the start.

Every probe is read-only (it never changes a clock, a persistence mode or anything else)
and optional: a probe that fails, times out or is missing gives None, never an exception.
Only hardware and software versions are kept: never environment variables, host names or
anything else that could carry a secret.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import threading
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launchprof.model.core import Machine

SMI_TIMEOUT_S = 5.0  # nvidia-smi answers in well under a second; a hung driver must not hang the worker


# --- host -------------------------------------------------------------------------------------


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's marketing name; /proc/cpuinfo on Linux, ``platform.processor()`` elsewhere."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or None


def cpu_cores() -> int | None:
    """Logical CPUs this process may run on (what a load average is measured against)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def load_avg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


# --- GPU: nvidia-smi --------------------------------------------------------------------------


def nvidia_smi(*args: str) -> list[str] | None:
    """Lines of a read-only nvidia-smi query, or None when it is missing, fails or times out."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, *args], capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=True).stdout
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return [line.strip() for line in out.splitlines() if line.strip()]


def _selector(uuid: str | None) -> list[str]:
    """``-i GPU-...`` for our device; without a UUID, every GPU answers and we cannot tell ours."""
    return ["-i", uuid] if uuid else []


def _int(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def smi_gpu_state(uuid: str | None) -> tuple[dict[str, int] | None, int | None]:
    """(clocks {sm, mem} in MHz, total memory in bytes) from nvidia-smi; None where unknown."""
    lines = nvidia_smi("--query-gpu=clocks.sm,clocks.mem,memory.total", "--format=csv,noheader,nounits", *_selector(uuid))
    if not lines or len(lines) != 1:  # several GPUs and no UUID: which one is ours is unknown
        return None, None
    fields = [f.strip() for f in lines[0].split(",")]
    if len(fields) != 3:
        return None, None
    sm, mem, total_mib = (_int(f) for f in fields)
    clocks = {"sm": sm, "mem": mem} if sm is not None and mem is not None else None
    return clocks, None if total_mib is None else total_mib * 1024 * 1024


def smi_other_processes(uuid: str | None, own_pid: int) -> bool | None:
    lines = nvidia_smi("--query-compute-apps=pid", "--format=csv,noheader", *_selector(uuid))
    if lines is None:
        return None
    pids = {_int(line) for line in lines}
    pids.discard(None)
    return bool(pids - {own_pid})


def smi_driver() -> str | None:
    lines = nvidia_smi("--query-gpu=driver_version", "--format=csv,noheader")
    return lines[0] if lines else None


# --- GPU: NVML (nvidia-ml-py), preferred when importable ---------------------------------------


def nvml_open() -> Any:
    """The pynvml module, initialised; None when NVML cannot be imported or started."""
    try:
        import pynvml  # nvidia-ml-py
    except Exception:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    return pynvml


def nvml_close(pynvml: Any) -> None:
    try:
        pynvml.nvmlShutdown()
    except Exception:
        pass


def nvml_driver(pynvml: Any) -> str | None:
    try:
        version = pynvml.nvmlSystemGetDriverVersion()
    except Exception:
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


def nvml_device(pynvml: Any, uuid: str | None, own_pid: int) -> dict[str, Any]:
    """Clocks, memory and other processes of our GPU through an open NVML; what it could not
    read is missing from the answer (every GPU answers without a UUID: then nothing)."""
    state: dict[str, Any] = {}
    try:
        if uuid is None and pynvml.nvmlDeviceGetCount() != 1:
            return state
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:
        return state
    for key, probe in (
        ("gpu_clocks_mhz", lambda: {"sm": int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)), "mem": int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM))}),
        ("gpu_memory_bytes", lambda: int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)),
        ("gpu_other_processes", lambda: bool({p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)} - {own_pid})),
    ):
        try:
            state[key] = probe()
        except Exception:
            pass
    return state


def smi_fill(state: dict[str, Any], uuid: str | None, pid: int) -> dict[str, Any]:
    """What NVML left out of ``state``, from nvidia-smi; its two queries run side by side."""
    wanted: dict[str, Callable[[], Any]] = {}
    if "gpu_clocks_mhz" not in state or "gpu_memory_bytes" not in state:
        wanted["clocks"] = functools.partial(smi_gpu_state, uuid)
    if "gpu_other_processes" not in state:
        wanted["others"] = functools.partial(smi_other_processes, uuid, pid)
    got = side_by_side(wanted)
    if "clocks" in wanted:
        clocks, memory = got.get("clocks") or (None, None)
        state.setdefault("gpu_clocks_mhz", clocks)
        state.setdefault("gpu_memory_bytes", memory)
    if "others" in wanted:
        state["gpu_other_processes"] = got.get("others")
    return state


def opened_driver() -> tuple[Any, str | None]:
    """(NVML opened or None, the driver version from NVML, else nvidia-smi)."""
    pynvml = nvml_open()
    driver = nvml_driver(pynvml) if pynvml is not None else None
    return pynvml, smi_driver() if driver is None else driver


def device_state(opened: tuple[Any, str | None] | None, uuid: str | None, pid: int) -> dict[str, Any]:
    """Driver, clocks, memory and other GPU processes from :func:`opened_driver`'s answer:
    NVML first (closed here), nvidia-smi for what it missed."""
    pynvml, driver = opened or (None, None)
    state: dict[str, Any] = {"driver": driver}
    if pynvml is not None:
        try:
            state |= nvml_device(pynvml, uuid, pid)
        finally:
            nvml_close(pynvml)
    return smi_fill(state, uuid, pid)


def gpu_state(uuid: str | None, own_pid: int | None = None) -> dict[str, Any]:
    """:func:`device_state` in one go, the driver asked first."""
    return device_state(opened_driver(), uuid, os.getpid() if own_pid is None else own_pid)


# --- queries beside other work -----------------------------------------------------------------


def in_background(work: Callable[[], Any]) -> Callable[[], Any]:
    """Start ``work`` in a daemon thread; the returned call waits for its answer (None if it
    raised: every probe is optional). nvidia-smi runs in a process of its own and NVML's calls
    leave Python's lock, so the caller's work goes on meanwhile."""
    box: list[Any] = [None]

    def run() -> None:
        try:
            box[0] = work()
        except Exception:
            pass

    thread = threading.Thread(target=run, name="launchprof-machine", daemon=True)
    thread.start()

    def result() -> Any:
        thread.join()
        return box[0]

    return result


def side_by_side(work: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each call's answer by name, the calls run at once."""
    if len(work) == 1:  # nothing to run beside it
        return {name: call() for name, call in work.items()}
    waiting = {name: in_background(call) for name, call in work.items()}
    return {name: wait() for name, wait in waiting.items()}


class MachineProbe:
    """:func:`collect_machine` in two steps, so the worker does other work while the GPU answers.

    nvidia-smi takes a tenth of a second to a second per query on a large GPU host, and a
    worker needs up to three of them between CUDA's start and the user's script. The driver is
    one for the whole host, so its query starts with the probe, before torch is imported; the
    device's clocks, memory and other processes are read once CUDA is up (clocks read before
    that would describe the GPU at another moment), while the worker imports its own modules.
    """

    def __init__(self) -> None:
        self._opened = in_background(opened_driver)
        self._device: dict[str, Any] = {}
        self._state: Callable[[], Any] | None = None

    def read_device(self) -> None:
        """Start reading the device's state: call with CUDA up and this rank's device chosen."""
        self._device = torch_device()
        if self._device.get("gpu"):
            self._state = in_background(functools.partial(self._device_state, self._device.get("uuid"), os.getpid()))
        else:  # no GPU, no GPU state: nothing waits for the driver's answer
            in_background(self._close)
            self._state = dict

    def _close(self) -> None:
        pynvml, _ = self._opened() or (None, None)
        if pynvml is not None:
            nvml_close(pynvml)

    def _device_state(self, uuid: str | None, pid: int) -> dict[str, Any]:
        return device_state(self._opened(), uuid, pid)

    def machine(self) -> Machine:
        """The machine, once every query has answered."""
        if self._state is None:
            self.read_device()
        return machine_of(self._device, (self._state() if self._state is not None else None) or {})


# --- torch ------------------------------------------------------------------------------------


def torch_device() -> dict[str, Any]:
    """torch/CUDA versions and, with a GPU, its name, total memory and UUID (for nvidia-smi -i)."""
    info: dict[str, Any] = {}
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            index = torch.cuda.current_device()
            props = torch.cuda.get_device_properties(index)
            info["gpu"] = props.name
            info["gpu_memory_bytes"] = int(props.total_memory)
            uuid = getattr(props, "uuid", None)
            if uuid is not None:
                text = str(uuid)
                info["uuid"] = text if text.startswith(("GPU-", "MIG-")) else f"GPU-{text}"
    except Exception:
        pass
    return info


def collect_machine() -> Machine:
    """Describe this machine and its state now; imports torch, so call it in the worker, not the CLI."""
    return MachineProbe().machine()


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def machine_of(dev: dict[str, Any], gpu: dict[str, Any]) -> Machine:
    """What torch, NVML and nvidia-smi say, converted as a report's machine is when read (a
    plain ``str`` for torch's version string, MHz as floats); pydantic is not needed for
    values this module made, and importing it cost the worker a tenth of a second."""
    clocks = gpu.get("gpu_clocks_mhz")
    return Machine(
        gpu=_text(dev.get("gpu")),
        driver=_text(gpu.get("driver")),
        cuda=_text(dev.get("cuda")),
        torch=_text(dev.get("torch")),
        python=platform.python_version(),
        cpu_model=cpu_model(),
        cpu_cores=cpu_cores(),
        load_avg=load_avg(),
        gpu_memory_bytes=dev.get("gpu_memory_bytes") or gpu.get("gpu_memory_bytes"),
        gpu_clocks_mhz=None if clocks is None else {str(k): float(v) for k, v in clocks.items()},
        gpu_other_processes=gpu.get("gpu_other_processes"),
    )
