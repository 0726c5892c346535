"""Which stack frame is the user's: findings point at the user's line, never at torch or launchprof."""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from types import FrameType, TracebackType

import torch

from launchprof.events.record import Site as EventSite
from launchprof.common.source import around

_SKIP_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {
        os.path.dirname(torch.__file__),
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # launchprof's own folder
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["platstdlib"],
    }
)
_THIRD_PARTY = ("site-packages", "dist-packages")

# The user's script folder: frames under it are preferred over other libraries'.
SCRIPT_ROOT: list[str] = []


@dataclass(frozen=True, kw_only=True)
class Site(EventSite):
    """A frame of the user's code, every field known; events carry it as it is."""

    file: str
    line: int
    code: str
    function: str

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "code": self.code, "function": self.function}


def is_internal(filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return True
    real = os.path.realpath(filename)
    return real.startswith(_SKIP_DIRS)


def _is_project(filename: str) -> bool:
    real = os.path.realpath(filename)
    return any(real.startswith(root) for root in SCRIPT_ROOT) or not any(part in real for part in _THIRD_PARTY)


def user_site(frames: list[tuple[str, int, str]]) -> Site | None:
    """The innermost frame in the user's own code; ``frames`` run outermost first.

    A frame under the script's folder wins over one in a third-party package, which
    wins over nothing: the hint must land where the user can change the code.
    """
    candidates = [f for f in frames if not is_internal(f[0])]
    if not candidates:
        return None
    project = [f for f in candidates if _is_project(f[0])]
    file, line, function = (project or candidates)[-1]
    return Site(file=os.path.realpath(file), line=line, code=linecache.getline(file, line).strip(), function=function)


def definition_of(fn: object) -> tuple[str | None, int | None]:
    """Where the user wrote ``fn``: through ``functools.wraps`` wrappers (``__wrapped__``,
    which ``@torch.no_grad()`` and most decorators set) to the innermost function, so a
    target is never located at ``torch/utils/_contextlib.py``."""
    import inspect

    target = getattr(fn, "__func__", fn)
    try:
        target = inspect.unwrap(target)  # type: ignore[arg-type]
    except ValueError:  # a __wrapped__ cycle
        pass
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code else (None, None)


def stack_site(skip: int = 1) -> Site | None:
    """The user's frame in the current Python stack."""
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(sys._getframe(skip))]
    return user_site(frames)


def frame_site(frame: FrameType | None) -> Site | None:
    """The user's frame at or above ``frame``."""
    chain = []
    while frame is not None:
        chain.append((frame.f_code.co_filename, frame.f_lineno or 0, frame.f_code.co_name))
        frame = frame.f_back
    return user_site(list(reversed(chain)))


def traceback_site(tb: TracebackType | None) -> Site | None:
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(tb)]
    return user_site(frames)


def snippet(file: str, line: int, context: int = 2) -> list[list[object]]:
    """Source lines around ``line`` for reports rendered where the file is absent."""
    return around(file, line, context)
