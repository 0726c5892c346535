"""Run the rules over the targets and what they call; collect, dedupe and suppress findings.

Targets come from ``@launchprof.target`` marks, ``--target`` or ``--all``. From each
target the engine follows calls into functions of the linted files (by name,
``mod.fn``, ``self.method``, ``self.layer(x)`` -> ``forward``), walking each
function once per distinct set of argument kinds, so a hazard inside a helper is
reported once, at the helper's line.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from launchprof.hazards.kinds import KINDS
from launchprof.lint.facts import FunctionFacts
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.files import collect_files, parse_file
from launchprof.lint.index import Index
from launchprof.lint.params import callee_params, root_params
from launchprof.lint.rules import RULES, Finding, Tree
from launchprof.lint.suppress import is_suppressed
from launchprof.lint.walker import Walker
from launchprof.session import Hazard

# Under --all, free the trees of the files already checked this often (files).
COLLECT_EVERY = 256
# A function called from many places with different argument kinds is walked at most this often.
MAX_CONTEXTS = 8


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


@contextmanager
def _fast_tree_work() -> Iterator[None]:
    """Pause the cyclic GC and allow deep recursion while parsing and walking.

    Parsing allocates millions of long-lived AST nodes; with the GC on, its repeated
    scans of them cost more than the parse itself (torch's 1.2 million lines parse in
    5.4 s with the GC paused, 12.6 s with it on). The index refers to itself (a
    function knows its module), so the trees are freed by one collection at the end,
    while nothing refers to them any more: left to the caller's GC they would first be
    scanned as survivors, which measured six times slower. Deeply nested expressions
    in generated code need more than the default 1000 frames.
    """
    was_enabled = gc.isenabled()
    limit = sys.getrecursionlimit()
    gc.disable()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        gc.collect()
        if was_enabled:
            gc.enable()


@dataclass
class _Collector:
    """Findings from all trees, deduplicated by place and message, with suppressions counted."""

    hazards: list[Hazard] = field(default_factory=list)
    suppressed: int = 0
    skipped: list[str] = field(default_factory=list)
    walked: dict[tuple, FunctionFacts | None] = field(default_factory=dict)
    contexts: dict[int, int] = field(default_factory=dict)
    _seen: set[tuple] = field(default_factory=set)

    def walk(self, ref: FunctionRef, params: dict, follow: bool) -> FunctionFacts | None:
        """Walk one function; one that cannot be walked is skipped and named, never a traceback."""
        try:
            return Walker(ref, params, follow).run()
        except RecursionError:
            self.skipped.append(f"{ref.display} (nested too deeply)")
        except Exception as exc:  # a construct lint does not know must not stop the whole check
            self.skipped.append(f"{ref.display} (lint could not read it: {type(exc).__name__}: {exc})")
        return None

    def check_tree(self, root: FunctionRef) -> None:
        """Walk the target and everything it calls in the linted files, then run every rule."""
        queue: list[tuple[FunctionRef, dict]] = [(root, root_params(root, is_target=True))]
        tree: list[FunctionFacts] = []
        in_tree: set[tuple] = set()
        while queue:
            ref, params = queue.pop(0)
            key = (id(ref.node), tuple(sorted((name, val.kind, val.origin) for name, val in params.items())))
            if key in in_tree:
                continue
            in_tree.add(key)
            if key not in self.walked:
                if self.contexts.get(id(ref.node), 0) >= MAX_CONTEXTS:
                    continue
                self.contexts[id(ref.node)] = self.contexts.get(id(ref.node), 0) + 1
                self.walked[key] = self.walk(ref, params, follow=True)
            facts = self.walked[key]
            if facts is None:
                continue
            tree.append(facts)
            queue.extend((callee, callee_params(callee, bound)) for callee, bound in facts.callees)
        self.run_rules(Tree(root, tuple(tree)))

    def check_alone(self, ref: FunctionRef) -> list[FunctionRef]:
        """``--all``: one function on its own; returns the functions defined inside it."""
        facts = self.walk(ref, root_params(ref, is_target=ref.is_target), follow=False)
        if facts is None:
            return []
        self.run_rules(Tree(ref, (facts,)))
        return facts.nested

    def run_rules(self, tree: Tree) -> None:
        for facts in tree.functions:
            for rule in RULES:
                for finding in rule(facts, tree):
                    self.add(facts, finding)

    def add(self, facts: FunctionFacts, finding: Finding) -> None:
        source = facts.ref.module.source
        key = (source.path, finding.line, finding.kind, finding.message)
        if key in self._seen:
            return
        self._seen.add(key)
        line = source.line(finding.line)
        if is_suppressed(line, finding.kind):
            self.suppressed += 1
            return
        kind = KINDS[finding.kind]
        self.hazards.append(
            Hazard(
                kind=kind.id,
                severity=kind.severity,
                message=finding.message,
                file=source.path,
                line=finding.line,
                hint=f"{kind.hint} {finding.hint}".strip(),
                source="static",
                details={"function": facts.ref.qualname, "code": line.strip()},
            )
        )


def lint(paths: tuple[Path, ...] | list[Path], target: str | None = None, all_functions: bool = False) -> LintResult:
    """Check the targets under ``paths`` (or ``target``, or every function) for capture hazards."""
    files = collect_files(paths)
    with _fast_tree_work():
        result = _lint(files, target, all_functions)  # no syntax tree outlives this call
    return result


def _lint(files: list[str], target: str | None, all_functions: bool) -> LintResult:
    collector = _Collector()
    if all_functions:
        lines, targets = _lint_every_function(files, collector)
        walked = len(targets)
    else:
        lines, targets = _lint_targets(files, target, collector)
        walked = sum(1 for f in collector.walked.values() if f is not None)
    hazards = sorted(collector.hazards, key=lambda h: (h.file or "", h.line or 0, h.kind, h.message))
    return LintResult(tuple(hazards), collector.suppressed, tuple(targets), walked, len(files), lines, tuple(collector.skipped))


def _lint_targets(files: list[str], target: str | None, collector: _Collector) -> tuple[int, list[Target]]:
    """Parse everything (calls may lead anywhere in the files), then check each target's tree."""
    sources = [parse_file(path) for path in files]
    index = Index(sources)
    roots = index.resolve_target(target) if target else index.marked_targets()
    for root in roots:
        collector.check_tree(root)
    return sum(s.data.count(b"\n") for s in sources), [_target(r) for r in roots]


def _lint_every_function(files: list[str], collector: _Collector) -> tuple[int, list[Target]]:
    """``--all``: one file at a time, nothing followed, so each file's tree can go before the next.

    A module's index refers to itself (functions know their module), so with the GC
    paused the trees are only freed by an explicit collection, done every few files.
    """
    lines = 0
    targets: list[Target] = []
    for number, path in enumerate(files, 1):
        if number % COLLECT_EVERY == 0:
            gc.collect(1)
        source = parse_file(path)
        lines += source.data.count(b"\n")
        queue = list(Index([source]).all_modules[0].all_functions())
        while queue:
            ref = queue.pop(0)
            targets.append(_target(ref))
            queue.extend(collector.check_alone(ref))
    return lines, targets


def _target(ref: FunctionRef) -> Target:
    return Target(ref.module.name, ref.qualname, ref.module.source.path)
