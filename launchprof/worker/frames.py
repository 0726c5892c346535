"""Which stack frame is the user's: findings point at the user's line, never at torch or launchprof."""

from __future__ import annotations

import functools
import linecache
import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from types import FrameType, TracebackType

import torch

from launchprof.events.record import Site as EventSite, omitted
from launchprof.common.source import around

_OWN_DIR = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # launchprof's folder
_TOOL_DIRS = (os.path.realpath(os.path.dirname(torch.__file__)) + os.sep, _OWN_DIR)
_STDLIB_DIRS = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})
_SKIP_DIRS = _TOOL_DIRS + _STDLIB_DIRS
_THIRD_PARTY = ("site-packages", "dist-packages")

# The user's script folder: frames under it are preferred over other libraries'.
SCRIPT_ROOT: list[str] = []


@dataclass(frozen=True, kw_only=True)
class Site(EventSite):
    """A frame of the user's code, every field known; events carry it as it is.

    ``library``: the frame inside an installed package where the finding really happened,
    when the site is the user's line that called into that package."""

    file: str
    line: int
    code: str
    function: str
    library: EventSite | None = omitted()  # left out of an event that embeds the site itself

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"file": self.file, "line": self.line, "code": self.code, "function": self.function}
        if self.library is not None:
            out["library_site"] = self.library
        return out


def is_internal(filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return True
    real = os.path.realpath(filename)
    return real.startswith(_SKIP_DIRS)


def is_runtime(filename: str) -> bool:
    """torch's, launchprof's or the standard library's own files: never the user's, never a
    library the user called. Unlike :func:`is_internal`, a package installed beside the
    standard library (a venv's or conda's ``lib/pythonX.Y/site-packages``) is not one of
    them, so the probe sees library code in every layout."""
    if not filename or filename.startswith("<"):
        return True
    return os.path.realpath(filename).startswith(_TOOL_DIRS) or _is_stdlib(filename)


def _is_project(filename: str) -> bool:
    real = os.path.realpath(filename)
    return any(real.startswith(root) for root in SCRIPT_ROOT) or not is_installed(real)


def is_installed(filename: str) -> bool:
    """A file of an installed package: under ``site-packages``, or under a folder on the path
    that pip installed into (``pip install --target DIR`` makes no ``site-packages``, but
    leaves a ``*.dist-info`` beside each package)."""
    real = os.path.realpath(filename)
    return any(part in real for part in _THIRD_PARTY) or real.startswith(_install_dirs(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _install_dirs(path: tuple[str, ...]) -> tuple[str, ...]:
    """The folders on ``sys.path`` that hold installed distributions (a ``*.dist-info`` child);
    an ``*.egg-info`` does not count: an editable install leaves one in the user's project."""
    found = []
    for entry in path:
        real = os.path.realpath(entry or os.curdir)
        try:
            if any(name.endswith(".dist-info") for name in os.listdir(real)):
                found.append(real + os.sep)
        except OSError:
            continue
    return tuple(found)


def is_project(filename: str) -> bool:
    """A file of the user's project: under the script's folder, or in no installed package."""
    return not is_runtime(filename) and _is_project(filename)


def user_site(frames: list[tuple[str, int, str]]) -> Site | None:
    """The innermost frame in the user's own code; ``frames`` run outermost first.

    A frame under the script's folder wins over one in a third-party package, which
    wins over nothing: the hint must land where the user can change the code.
    """
    candidates = [f for f in frames if not is_internal(f[0])]
    if not candidates:
        return None
    project = [f for f in candidates if _is_project(f[0])]
    return _site((project or candidates)[-1])


def placed_site(frames: list[tuple[str, int, str]]) -> Site | None:
    """The innermost frame of the user's project, with the library frame it called into as
    ``library`` (``frames`` run outermost first): a finding inside an installed package is
    filed at the user's line that called into it. The library frame is the innermost one of
    a package other than torch (transformers' line that calls torch says more than torch's
    plumbing), else torch's own (``GradScaler.step``). Frames below launchprof's own (its
    dispatch mode, its warning handler) are not the user's call. With no project frame, the
    innermost library frame itself; None when every frame is torch's, launchprof's or the
    stdlib's."""
    seen = [i for i, f in enumerate(frames) if not is_runtime(f[0])]
    if not seen:
        return None
    project = [i for i in seen if _is_project(frames[i][0])]
    if not project:
        return _site(frames[seen[-1]])
    packages: list[int] = []
    torch_own: list[int] = []
    for i in range(project[-1] + 1, len(frames)):
        file = frames[i][0]
        if file.startswith("<"):
            continue
        if os.path.realpath(file).startswith(_OWN_DIR):
            break
        if not is_runtime(file):
            packages.append(i)
        elif not _is_stdlib(file):
            torch_own.append(i)
    below = packages or torch_own
    return _site(frames[project[-1]], _site(frames[below[-1]]) if below else None)


def _is_stdlib(filename: str) -> bool:
    real = os.path.realpath(filename)
    return real.startswith(_STDLIB_DIRS) and not any(os.sep + part + os.sep in real for part in _THIRD_PARTY)


def _site(frame: tuple[str, int, str], library: Site | None = None) -> Site:
    file, line, function = frame
    where = EventSite(file=library.file, line=library.line, code=library.code, function=library.function) if library else None
    return Site(file=os.path.realpath(file), line=line, code=linecache.getline(file, line).strip(), function=function, library=where)


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


def _stack(skip: int) -> list[tuple[str, int, str]]:
    """The caller's stack from its ``sys._getframe(skip)`` outwards, outermost first, as
    (file, line, function)."""
    return [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(sys._getframe(skip + 1))]


def _chain(frame: FrameType | None) -> list[tuple[str, int, str]]:
    """The stack at or above ``frame``, outermost first, as (file, line, function)."""
    chain = []
    while frame is not None:
        chain.append((frame.f_code.co_filename, frame.f_lineno or 0, frame.f_code.co_name))
        frame = frame.f_back
    return list(reversed(chain))


def stack_site(skip: int = 1) -> Site | None:
    """The user's frame in the current Python stack."""
    return user_site(_stack(skip))


def frame_site(frame: FrameType | None) -> Site | None:
    """The user's frame at or above ``frame``."""
    return user_site(_chain(frame))


def placed_stack_site(skip: int = 1) -> Site | None:
    """:func:`placed_site` of the current Python stack."""
    return placed_site(_stack(skip))


def placed_frame_site(frame: FrameType | None) -> Site | None:
    """:func:`placed_site` of the stack at or above ``frame``."""
    return placed_site(_chain(frame))


def traceback_site(tb: TracebackType | None) -> Site | None:
    frames = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(tb)]
    return user_site(frames)


def snippet(file: str, line: int, context: int = 2) -> list[list[object]]:
    """Source lines around ``line`` for reports rendered where the file is absent."""
    return around(file, line, context)
