"""Machine metadata stamped on every report and device profile.

Only hardware and software versions: never environment variables, host names or
anything else that could carry a secret.
"""

from __future__ import annotations

import platform
import shutil
import subprocess

from launchprof.session import Machine


def driver_version() -> str | None:
    """The NVIDIA driver version (e.g. 580.159.04), via NVML or nvidia-smi."""
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
            return version.decode() if isinstance(version, bytes) else str(version)
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def collect_machine() -> Machine:
    """Describe this machine; imports torch, so call it in the worker, not the CLI."""
    gpu = cuda = torch_version = None
    try:
        import torch

        torch_version = torch.__version__
        cuda = torch.version.cuda
        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(torch.cuda.current_device())
    except Exception:
        pass
    return Machine(
        gpu=gpu,
        driver=driver_version() if gpu else None,
        cuda=cuda,
        torch=torch_version,
        python=platform.python_version(),
    )
