"""``@launchprof.target``, the one name a user's script needs, and the hook the worker sets.

A module of its own, below everything: the worker sets :data:`_target_hook` here without
loading the package's public API, and ``launchprof/__init__.py`` re-exports :func:`target`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

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
