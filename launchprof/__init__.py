"""launchprof: will CUDA graphs speed up this PyTorch workload, by how much, and what stops capture.

The only name a user's script needs is :func:`target`, a no-op decorator that marks the
function launchprof measures. It does nothing when the script runs without launchprof.
:func:`analyze`, :func:`check` and :class:`CaptureHazardError` (the Python API, see
:mod:`launchprof.api`) load on first use, so ``import launchprof`` stays cheap in scripts.
"""

from __future__ import annotations

from typing import Any

from launchprof.marker import target
from launchprof.version import __version__

_API_NAMES = frozenset({"analyze", "check", "CaptureHazardError"})


def __getattr__(name: str) -> Any:
    """Load the API on first use: scripts that only need ``target`` never import it."""
    if name in _API_NAMES:
        from launchprof import api

        return getattr(api, name)
    raise AttributeError(f"module 'launchprof' has no attribute {name!r}")


__all__ = ["CaptureHazardError", "__version__", "analyze", "check", "target"]
