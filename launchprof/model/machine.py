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
from pathlib import Path
from typing import Any

from launchprof.model.records import adapter
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


def nvml_state(uuid: str | None, own_pid: int) -> dict[str, Any] | None:
    """Driver, clocks, memory and other processes through NVML; None when NVML is unusable."""
    try:
        import pynvml  # nvidia-ml-py
    except Exception:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        state: dict[str, Any] = {}
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
            state["driver"] = version.decode() if isinstance(version, bytes) else str(version)
        except Exception:
            pass
        if uuid is None and pynvml.nvmlDeviceGetCount() != 1:
            return state
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else pynvml.nvmlDeviceGetHandleByIndex(0)
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
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def driver_version() -> str | None:
    """The NVIDIA driver version (e.g. 580.159.04), via NVML or nvidia-smi."""
    state = nvml_state(None, os.getpid()) or {}
    return state.get("driver") or smi_driver()


def gpu_state(uuid: str | None, own_pid: int | None = None) -> dict[str, Any]:
    """Driver, clocks, memory and other GPU processes: NVML first, nvidia-smi for what it missed."""
    pid = os.getpid() if own_pid is None else own_pid
    state = nvml_state(uuid, pid) or {}
    if "driver" not in state:
        state["driver"] = smi_driver()
    if "gpu_clocks_mhz" not in state or "gpu_memory_bytes" not in state:
        clocks, memory = smi_gpu_state(uuid)
        state.setdefault("gpu_clocks_mhz", clocks)
        state.setdefault("gpu_memory_bytes", memory)
    if "gpu_other_processes" not in state:
        state["gpu_other_processes"] = smi_other_processes(uuid, pid)
    return state


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
    dev = torch_device()
    gpu = gpu_state(dev.get("uuid")) if dev.get("gpu") else {}
    # What torch, NVML and nvidia-smi say, checked and converted as a report's machine is.
    return adapter(Machine).validate_python(dict(
        gpu=dev.get("gpu"),
        driver=gpu.get("driver"),
        cuda=dev.get("cuda"),
        torch=dev.get("torch"),
        python=platform.python_version(),
        cpu_model=cpu_model(),
        cpu_cores=cpu_cores(),
        load_avg=load_avg(),
        gpu_memory_bytes=dev.get("gpu_memory_bytes") or gpu.get("gpu_memory_bytes"),
        gpu_clocks_mhz=gpu.get("gpu_clocks_mhz"),
        gpu_other_processes=gpu.get("gpu_other_processes"),
    ))
