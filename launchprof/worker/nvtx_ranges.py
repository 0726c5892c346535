"""NVTX ranges ``launchprof/eager|capture|replay`` so a run reads well in Nsight Systems."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def nvtx_range(name: str) -> Iterator[None]:
    try:
        import nvtx

        ctx = nvtx.annotate(f"launchprof/{name}", domain="launchprof")
    except Exception:  # nvtx missing: torch's own NVTX binding does the same job
        import torch

        ctx = torch.cuda.nvtx.range(f"launchprof/{name}")
    with ctx:
        yield
