"""Choose the files and the targets, then let the collector check them.

Targets come from ``@launchprof.target`` marks, ``--target`` or ``--all``. In target
mode each file is parsed once to find the targets, and only the trees of files that
hold one are kept; calls lead the collector into other modules of the project, which
are read again when needed (memory stays low on large trees). Under ``--all`` each
file is checked on its own and dropped before the next, in worker processes when the
tree is large enough to pay for them.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from launchprof.errors import UsageError
from launchprof.lint.collector import Collector, Found
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.driver import driver_functions
from launchprof.lint.files import SourceFile, Unreadable, collect_files, forget_folders, parse_file, read_file
from launchprof.lint.index import Index, module_matches, unknown_target
from launchprof.lint.loader import ModuleLoader
from launchprof.lint.parallel import ChunkResult, check_in_workers, workers_for
from launchprof.lint.suppress import suppression_kinds
from launchprof.common.project import find_project_root, relative_to_root

if TYPE_CHECKING:
    from launchprof.model.hazard_records import Hazard

# Under --all, free the trees of the files already checked this often (files).
COLLECT_EVERY = 256


@dataclass(frozen=True)
class Target:
    """A checked function, by name only: a result keeps no syntax tree alive."""

    module: str
    qualname: str
    path: str

    @property
    def display(self) -> str:
        return f"{self.module}:{self.qualname}"


@dataclass(frozen=True)
class LintResult:
    hazards: tuple[Hazard, ...]
    suppressed: int
    targets: tuple[Target, ...]  # the checked roots (every function under --all)
    functions: int  # functions walked: targets and the functions they call
    files: int
    lines: int
    skipped: tuple[str, ...] = ()  # functions that could not be walked, each with the reason
    unreadable: tuple[str, ...] = ()  # files that could not be read or parsed, each with the reason
    unlisted: tuple[str, ...] = ()  # folders under a linted one that could not be listed, each with the reason
    unresolved: tuple[str, ...] = ()  # calls from a target that could not be followed: "file:line `code` (why)"
    unknown_ignores: tuple[str, ...] = ()  # "file:line: unknown kind 'x'" in `# launchprof: ignore[...]`
    root: str = ""  # the project root hazard files are relative to
    seconds: float = field(default=0.0, compare=False)  # lint's own time (``meanwhile`` excluded when it ran first)


@contextmanager
def _fast_tree_work() -> Iterator[None]:
    """Pause the cyclic GC and allow deep recursion while parsing and walking.

    Parsing allocates millions of long-lived AST nodes; with the GC on, its repeated
    scans of them cost more than the parse itself (torch's 1.2 million lines parse in
    5.4 s with the GC paused, 12.6 s with it on). In target mode the index refers to
    itself (a function knows its module), so the trees are freed by one collection at
    the end, while nothing refers to them any more: left to the caller's GC they would
    first be scanned as survivors, which measured six times slower. Objects from before
    (the imports) are frozen meanwhile, so that collection scans only what lint made.
    Deeply nested expressions in generated code need more than the default 1000 frames.
    """
    was_enabled = gc.isenabled()
    was_frozen = gc.get_freeze_count() > 0  # a caller's own freeze is left as it was
    limit = sys.getrecursionlimit()
    gc.disable()
    gc.freeze()  # what existed before (the imports) is not rescanned by the collections below
    sys.setrecursionlimit(max(limit, 20000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        gc.collect()
        if not was_frozen:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


@dataclass
class _Scan:
    """What reading the files gave, besides the trees: counts and notes."""

    root: Path
    exclude: tuple[str, ...] = ()
    lines: int = 0
    read: int = 0
    unreadable: list[str] = field(default_factory=list)
    ignores: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, kind) in ignore comments

    def source(self, path: str) -> SourceFile | None:
        """Parse one file, counting its lines and noting the kinds its ignore comments name; None when unreadable."""
        try:
            data = read_file(path)
            source = parse_file(path, data)
        except Unreadable as exc:
            self.unreadable.append(str(exc))
            return None
        self.read += 1
        self.lines += data.count(b"\n")
        for line, kind in suppression_kinds(data):
            self.ignores.append((relative_to_root(os.path.abspath(path), self.root), line, kind))
        return source


def lint(
    paths: tuple[Path, ...] | list[Path],
    target: str | None = None,
    all_functions: bool = False,
    *,
    project_root: Path | None = None,
    exclude: tuple[str, ...] = (),
    strict: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> LintResult:
    """Check the targets under ``paths`` (or ``target``, or every function) for capture hazards.

    A file that cannot be read or parsed is noted and skipped; only when no file at all
    could be read is that a usage error (there is nothing to report on). ``meanwhile``
    is called once: while worker processes check the files (under ``--all`` on many
    files), else before the checking starts, and then its time is not lint's.
    """
    if not paths:
        raise UsageError("give at least one file or folder to lint")
    started = time.perf_counter()
    forget_folders()
    root = find_project_root(paths[0], project_root)
    unlisted: list[str] = []
    files = collect_files(paths, root, exclude, unlisted)
    workers = workers_for(len(files)) if all_functions else 0
    if meanwhile is not None and not workers:
        before = time.perf_counter()
        meanwhile()  # nothing to overlap it with
        started += time.perf_counter() - before
        meanwhile = None
    scan = _Scan(root, exclude)
    collector = Collector(root, strict)
    with _fast_tree_work():  # no syntax tree outlives this block
        if all_functions:
            targets = _lint_every_function(files, scan, collector, workers, meanwhile)
            walked = len(targets)
        else:
            targets = _lint_targets(files, target, scan, collector)
            walked = sum(1 for f in collector.walked.values() if f is not None)
        collector.walked.clear()
    if not scan.read:
        raise UsageError(scan.unreadable[0] if len(files) == 1 else f"no file could be read: {scan.unreadable[0]} (and {len(files) - 1} more)")
    found = sorted(collector.hazards, key=lambda h: (h.file, h.line, h.kind, h.message))
    return LintResult(
        hazards=tuple(as_hazard(f) for f in found),
        suppressed=collector.suppressed,
        targets=tuple(targets),
        functions=walked,
        files=scan.read,
        lines=scan.lines,
        skipped=tuple(collector.skipped),
        unreadable=tuple(scan.unreadable),
        unlisted=tuple(unlisted),
        unresolved=tuple(collector.unresolved),
        unknown_ignores=tuple(unknown_ignores(scan.ignores)),
        root=str(root),
        seconds=time.perf_counter() - started,
    )


def _lint_targets(files: list[str], target: str | None, scan: _Scan, collector: Collector) -> list[Target]:
    """Find the targets file by file, keeping only the trees that hold one; then check each."""
    loader = ModuleLoader(scan.root, files, scan.exclude)
    index = Index(loader=loader)
    functions: list[FunctionRef] = []
    methods: list[FunctionRef] = []
    known: set[str] = set()
    modules_seen = False
    for number, path in enumerate(files, 1):
        source = scan.source(path)
        if source is None:
            continue
        info = index.add(source)
        found, fallback = index.targets_in(info, target)
        functions += found
        methods += fallback
        if target is not None:
            modules_seen = modules_seen or module_matches(info, target.rpartition(":")[0])
            known.update(f.qualname for f in info.all_functions())
        if not found and not fallback:
            index.drop(info)  # read again if a call leads here
        if number % COLLECT_EVERY == 0:
            gc.collect(1)
    roots = functions or methods
    if target is not None and not roots and scan.read:
        raise unknown_target(target, modules_seen, known)
    for root in roots:
        collector.check_tree(root)
    scan.unreadable.extend(n for n in loader.notes if n not in scan.unreadable)
    return [_target(r) for r in roots]


def as_hazard(found: Found) -> Hazard:
    """A finding as a report hazard: severity from its kind, the fix hint from its kind and code."""
    from launchprof.hazards.kinds import KINDS
    from launchprof.model.hazard_records import Hazard
    from launchprof.render.words.hazard_text import hazard_hint

    kind = KINDS[found.kind]
    return Hazard(
        kind=kind.id,
        severity=found.severity or kind.severity,
        message=found.message,
        file=found.file,
        line=found.line,
        hint=hazard_hint(found.kind, found.code, found.params),
        source="static",
        details=found.details,
        code=found.code,
        params=found.params,
    )


def unknown_ignores(ignores: list[tuple[str, int, str]]) -> list[str]:
    """Kinds in ``# launchprof: ignore[...]`` comments that are no hazard kind (a typo silences nothing)."""
    from launchprof.hazards.kinds import KINDS

    return [f"{file}:{line}: unknown kind {kind!r} in `# launchprof: ignore[...]`" for file, line, kind in ignores if kind not in KINDS]


def _lint_every_function(
    files: list[str], scan: _Scan, collector: Collector, workers: int, meanwhile: Callable[[], object] | None = None
) -> list[Target]:
    """``--all``: every file on its own, nothing followed; in ``workers`` processes when there are any."""
    if not workers:
        return _check_files(files, scan, collector)
    targets: list[Target] = []
    for part in check_in_workers(check_chunk, files, scan.root, collector.strict, workers, meanwhile):
        collector.hazards.extend(part.hazards)
        collector.suppressed += part.suppressed
        collector.skipped.extend(part.skipped)
        targets.extend(part.targets)
        scan.lines += part.lines
        scan.read += part.read
        scan.unreadable.extend(part.unreadable)
        scan.ignores.extend(part.ignores)
    return targets


def check_chunk(files: list[str], root: Path, strict: bool) -> ChunkResult:
    """A worker's task: check some files under ``--all`` and return what it found."""
    scan = _Scan(root)
    collector = Collector(root, strict)
    targets = _check_files(files, scan, collector)
    gc.collect(1)  # this chunk's trees: the worker goes on to the next chunk
    return ChunkResult(
        collector.hazards, collector.suppressed, collector.skipped, targets, scan.lines, scan.read, scan.unreadable, scan.ignores
    )


def _check_files(files: list[str], scan: _Scan, collector: Collector) -> list[Target]:
    """One file at a time, so each file's tree can go before the next.

    A module's index refers to itself (functions know their module), so with the GC
    paused the trees are only freed by an explicit collection, done every few files.
    """
    targets: list[Target] = []
    for number, path in enumerate(files, 1):
        if number % COLLECT_EVERY == 0:
            gc.collect(1)
        source = scan.source(path)
        if source is None:
            continue
        index = Index([source])
        module = index.all_modules[0]
        drivers = driver_functions(module)
        queue = list(module.all_functions())
        done: list[FunctionRef] = []
        while queue:
            ref = queue.pop(0)
            done.append(ref)
            targets.append(_target(ref))
            driver = None if ref.is_target else drivers.get(ref.qualname)  # a marked target keeps its severity
            queue.extend(collector.check_alone(ref, driver))
        _break_cycles(index, done)
    return targets


def _break_cycles(index: Index, refs: list[FunctionRef]) -> None:
    """Let reference counting free a checked file's tree at once, without the cyclic GC.

    The index, its modules, classes and functions point at each other (a function
    knows its module and class, a class its methods and cached attribute kinds), so a
    tree would otherwise wait for a collection that scans every one of its nodes: that
    scan cost about as much as parsing. Under ``--all`` nothing is needed after the
    file is checked, so the links are cut here.
    """
    for ref in refs:
        if ref.cls is not None:
            ref.cls.__dict__.clear()
        ref.__dict__.clear()
    for info in index.all_modules:
        for cls in (*info.classes.values(), *info.replaced):
            cls.__dict__.clear()
        info.__dict__.clear()
    index.__dict__.clear()


def _target(ref: FunctionRef) -> Target:
    return Target(ref.module.name, ref.qualname, ref.module.source.path)
