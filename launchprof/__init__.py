"""launchprof: will CUDA graphs speed up this PyTorch workload, by how much, and what stops capture.

The only name a user's script needs is :func:`target`, a no-op decorator that marks the
function launchprof measures. It does nothing when the script runs without launchprof.
:func:`analyze`, :func:`check` and :class:`CaptureHazardError` (the Python API, see
:mod:`launchprof.api`) load on first use, so ``import launchprof`` stays cheap in scripts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])

# Set by the worker process (launchprof.worker.hook) before the user's script runs.
# Outside a launchprof run it stays None and ``target`` returns the function unchanged.
_target_hook: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None


def target(fn: F) -> F:
    """Mark ``fn`` as the function whose calls launchprof measures and captures.

    Harmless without launchprof: it returns ``fn`` itself.
    """
    if _target_hook is None:
        return fn
    return _target_hook(fn)  # type: ignore[return-value]


_API_NAMES = frozenset({"analyze", "check", "CaptureHazardError"})


def __getattr__(name: str) -> Any:
    """Load the API on first use: scripts that only need ``target`` never import it."""
    if name in _API_NAMES:
        from launchprof import api

        return getattr(api, name)
    raise AttributeError(f"module 'launchprof' has no attribute {name!r}")


__all__ = ["CaptureHazardError", "__version__", "analyze", "check", "target"]
