"""Host side effects of the probe call: writes to state that outlives the call.

Each function the call runs is scanned once (:mod:`launchprof.worker.probe_scan`); each
time it runs, the objects its writes go through are noted (all of them: a method may run on
a cache made for this call and on the long-lived model). After the call, a write counts only
when its object existed before the call and is still alive
(:mod:`launchprof.worker.probe_objects`): decided by identity, never by package name. A write
to a module global is always to long-lived state; print and logging always reach outside
the process.

In the user's own functions every such line counts, run or not on this call: the user reads
the branch and decides. In a library's, only the lines that ran count (a line trace of those
functions alone), since a branch the user never takes there (``if compiling:``) is not theirs
to weigh; and the finding is filed at the user's line that called into the library, with the
library's own line kept as ``library_site``: that line is where the user can act.
"""

from __future__ import annotations

import gc
import linecache
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import torch

from launchprof.events.record import Site as EventSite
from launchprof.worker.frames import is_project
from launchprof.worker.probe_objects import CallObjects, holder
from launchprof.worker.probe_rng import foreign_rng
from launchprof.worker.probe_scan import CodeScan, Scanner

# The user's line that called into a library function: (file, line, function).
UserKey = tuple[str, int, str]
# line -> the user lines it ran from (None: no user line on the stack)
Hits = dict[int, set[UserKey | None]]
# A library function called from many lines is filed at this many of them at most.
_MAX_USERS = 8


@dataclass
class _Target:
    """One object a function ran with under one name, and the write lines that ran on it."""

    ref: Any
    hits: Hits = field(default_factory=dict)


@dataclass
class CodeRun:
    code: CodeType
    glb: dict[str, Any]
    scan: CodeScan
    library: bool
    targets: dict[tuple[str, int], _Target] = field(default_factory=dict)
    hits: Hits = field(default_factory=dict)  # the lines of the other findings that ran


def _hit(hits: Hits, line: int, user: UserKey | None) -> None:
    users = hits.setdefault(line, set())
    if len(users) < _MAX_USERS:
        users.add(user)


class _Lines:
    """The line trace of one call of a library function: which of its write, print and
    draw lines ran, on which objects, reached from which user line."""

    def __init__(self, run: CodeRun, bound: dict[str, _Target], user: UserKey | None) -> None:
        self.run, self.bound, self.user = run, bound, user

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            try:
                line = frame.f_lineno
                scan = self.run.scan
                for name in scan.attr_lines.get(line, ()):
                    target = self.bound.get(name)
                    if target is not None:
                        _hit(target.hits, line, self.user)
                if line in scan.other_lines:
                    _hit(self.run.hits, line, self.user)
            except Exception:  # a trace function that raises is removed: keep watching
                pass
        return self


@dataclass
class _Append:
    """An append to a container reachable from globals, a closure or ``self``."""

    owner: Any  # kept: list, dict and set take no weak reference
    root: Any  # the globals dict, "closure", or a holder of the ``self`` it was reached through
    what: str
    site: dict[str, Any]


class Effects:
    """What the profile hook notes of the functions that run, and the findings made of it."""

    def __init__(self) -> None:
        self.scanner = Scanner()
        self.runs: dict[CodeType, CodeRun] = {}
        self.appends: list[_Append] = []
        self._project: dict[str, bool] = {}
        self._seen_appends: set[tuple[CodeType, int, int]] = set()

    def project(self, file: str) -> bool:
        got = self._project.get(file)
        if got is None:
            got = self._project[file] = is_project(file)
        return got

    def on_call(self, frame: FrameType) -> _Lines | None:
        """A function outside torch, launchprof and the stdlib starts: note the objects its
        writes go through; for a library's, the line trace of this call."""
        code = frame.f_code
        run = self.runs.get(code)
        if run is not None and run.scan.empty:
            return None
        library = run.library if run is not None else not self.project(code.co_filename)
        user = self._user(frame.f_back) if library else None
        if user is False:
            return None  # not scanned either: an import runs many functions, once
        if run is None:
            run = self.runs[code] = CodeRun(code, frame.f_globals, self.scanner.scan(code), library)
            if run.scan.empty:
                return None
        bound: dict[str, _Target] = {}
        local = frame.f_locals if run.scan.holders else {}
        for name in run.scan.holders:
            obj = local.get(name)
            if obj is None:
                continue
            key = (name, id(obj))
            target = run.targets.get(key)
            if target is None or target.ref() is not obj:
                target = run.targets[key] = _Target(holder(obj))
            bound[name] = target
        return _Lines(run, bound, user) if run.library else None

    def _user(self, frame: FrameType | None) -> UserKey | None | bool:
        """The innermost frame of the user's project: the line that called into the library.
        False when a module is being imported on the way there: what an import does, it
        does once, and no call repeats or misses it."""
        while frame is not None:
            code = frame.f_code
            if self.project(code.co_filename):
                return (code.co_filename, frame.f_lineno or 0, code.co_name)
            if code.co_name == "<module>":
                return False
            frame = frame.f_back
        return None

    def on_append(self, owner: Any, name: str, frame: FrameType, where: Callable[[], Any]) -> None:
        """``owner.<name>()`` (append, update …) ran in ``frame``; ``where()`` places it."""
        key = (frame.f_code, frame.f_lineno or 0, id(owner))
        if key in self._seen_appends:
            return
        self._seen_appends.add(key)
        root = _root(owner, frame) if self._user(frame) is not False else None
        site = where() if root is not None else None
        if site is None:
            return
        self.appends.append(_Append(owner, root, f"{type(owner).__name__}.{name}() on state kept across calls", site.as_dict()))

    def findings(self, objects: CallObjects) -> Found:
        found = Found()
        closures = _closures_of([r.code for r in self.runs.values() if any(n.scope == "nonlocal" for n in r.scan.names)])
        for run in self.runs.values():
            if not run.scan.empty:
                _of_run(run, objects, closures, found)
        for a in self.appends:
            if _kept(a, objects):
                found.containers.append(a.owner)
                found.effects.append({"what": a.what, **a.site})
        return found


@dataclass
class Found:
    effects: list[dict[str, Any]] = field(default_factory=list)
    draws: list[dict[str, Any]] = field(default_factory=list)
    writes: list[tuple[Any, str]] = field(default_factory=list)  # (object or globals, name): to undo
    containers: list[Any] = field(default_factory=list)
    _keys: set[tuple[Any, ...]] = field(default_factory=set)

    def add(self, into: list[dict[str, Any]], what: str, run: CodeRun, line: int, users: set[UserKey | None]) -> None:
        """One finding per user line the library function was reached from; a function of
        the user's own, or one no user line led to, at its own line."""
        own = _entry(run.code.co_filename, line, run.code.co_name)
        places = sorted((u for u in users if u is not None), key=lambda u: (u[0], u[1])) if run.library else []
        entries = [{**_entry(*u), "library_site": EventSite(**own)} for u in places]
        if not places:
            entries = [own]
        for entry in entries:
            lib = entry.get("library_site")
            key = (id(into), entry["file"], entry["line"], lib.line if lib else None, what)
            if key not in self._keys:
                self._keys.add(key)
                into.append({"what": what, **entry})


def _entry(file: str, line: int, function: str) -> dict[str, Any]:
    return {"file": file, "line": line, "code": linecache.getline(file, line).strip(), "function": function}


def _of_run(run: CodeRun, objects: CallObjects, closures: dict[CodeType, list[Any]], found: Found) -> None:
    def ran(hits: Hits, line: int) -> set[UserKey | None]:
        """Where a line counts from: every line of the user's own function, as its own; a
        library line only when it ran, from the user lines it ran from."""
        return hits.get(line, set()) if run.library else {None}

    for (name, _), target in run.targets.items():
        obj = target.ref()
        if obj is None or objects.existed(obj) is False:
            continue  # died in the call, or made by it: nobody keeps the write
        for w in run.scan.attrs:
            users = ran(target.hits, w.line) if w.name == name else set()
            if users and not _device_state(obj, w.attr):
                found.writes.append((obj, w.attr))
                found.add(found.effects, f"write to `{name}.{w.attr}` (a Python value, not a device tensor)", run, w.line, users)
    for n in run.scan.names:
        users = ran(run.hits, n.line)
        if not users or not objects.namespace_existed(run.glb):
            continue
        if n.scope == "nonlocal" and not _cell_kept(run.code, n.name, closures, objects):
            continue
        if n.scope == "global" and n.name in run.glb:
            found.writes.append((run.glb, n.name))
        found.add(found.effects, f"write to outside variable `{n.name}`", run, n.line, users)
    for s in run.scan.spoken:
        users = ran(run.hits, s.line)
        if users:
            found.add(found.effects, s.what, run, s.line, users)
    for c in run.scan.calls:
        users = ran(run.hits, c.line)
        what = foreign_rng(c.func, run.glb) if users else None
        if what:
            found.add(found.draws, what, run, c.line, users)


def _device_state(obj: Any, attr: str) -> bool:
    """A tensor or module attribute: device state the graph keeps, not a Python value."""
    try:
        return isinstance(getattr(obj, attr, None), (torch.Tensor, torch.nn.Module))
    except Exception:  # a property that raises: count the write
        return False


def _closures_of(codes: list[CodeType]) -> dict[CodeType, list[Any]]:
    """The live functions of each code that writes a ``nonlocal``: their cells say whether the
    variable outlives the call. One pass over the heap, only when such a function ran."""
    if not codes:
        return {}
    out: dict[CodeType, list[Any]] = {c: [] for c in codes}
    for ref in gc.get_referrers(*codes):
        if isinstance(ref, types.FunctionType) and ref.__code__ in out:
            out[ref.__code__].append(ref)
    return out


def _cell_kept(code: CodeType, name: str, closures: dict[CodeType, list[Any]], objects: CallObjects) -> bool:
    """True when a live function of ``code`` holds the variable in a cell made before the call."""
    if name not in code.co_freevars:
        return True
    i = code.co_freevars.index(name)
    return any(f.__closure__ and objects.existed(f.__closure__[i]) is not False for f in closures.get(code, []))


def _root(container: Any, frame: FrameType) -> Any:
    """How the container is reachable from state kept across calls: the frame's globals,
    "closure", a holder of the frame's ``self``; None when it is not (a local the call made)."""
    for value in list(frame.f_globals.values()):
        if value is container:
            return frame.f_globals
    local = frame.f_locals
    self_obj = local.get("self")
    if self_obj is not None:
        for value in list(getattr(self_obj, "__dict__", {}).values()):
            if value is container:
                return holder(self_obj)
    for cell in frame.f_code.co_freevars:
        if local.get(cell) is container:
            return "closure"
    return None


def _kept(a: _Append, objects: CallObjects) -> bool:
    if isinstance(a.root, dict) and not objects.namespace_existed(a.root):
        return False  # a module imported during the call
    existed = objects.existed(a.owner)
    if existed is not None:
        return existed
    if not callable(a.root):  # a dict the call may only have started tracking: its owner says
        return True
    owner = a.root()
    return owner is not None and objects.existed(owner) is not False
