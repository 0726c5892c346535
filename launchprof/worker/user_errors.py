"""Telling the user's exceptions from launchprof's own inside the measurement wrapper."""

from __future__ import annotations

import torch


class UserError(Exception):
    """Carries an exception raised by the user's code through launchprof's frames."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def is_device_error(exc: BaseException) -> bool:
    """CUDA errors (device asserts, illegal addresses, out of memory) raised wherever they surface."""
    return isinstance(exc, torch.cuda.OutOfMemoryError) or type(exc).__name__ == "AcceleratorError" or "CUDA error" in str(exc)
