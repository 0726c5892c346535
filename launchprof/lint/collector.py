"""Walk targets and what they call, run the rules, and keep the findings.

From each target the collector follows calls into every function lint can read (by
name, ``mod.fn``, ``self.method``, ``self.layer(x)`` -> ``forward``, into other
modules of the project), walking each function once per distinct set of argument
kinds, so a hazard inside a helper is reported once, at the helper's line, with the
call chain that reaches it from the target.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from launchprof.enums import Severity
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode, Placed
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.facts import FunctionFacts, text
from launchprof.lint.params import callee_params, root_params
from launchprof.lint.lint_rules import RULES, Finding, Tree
from launchprof.lint.scalar_args import scalar_params
from launchprof.lint.suppress import is_suppressed
from launchprof.lint.walker import Walker
from launchprof.common.project import relative_to_root
from launchprof.render.words.hazard_text import hazard_message

# A function called from many places with different argument kinds is walked at most this often.
MAX_CONTEXTS = 8
UNRESOLVED_KIND = "unresolved-call"


@dataclass(frozen=True, slots=True)
class Found:
    """A finding as lint records it: plain data, cheap to pass back from a worker process.

    It becomes a report hazard (:class:`~launchprof.model.hazard_records.Hazard`: severity and
    fix hint from the kind) in the parent process (:func:`launchprof.lint.engine.as_hazard`),
    so checking files needs neither the renderers nor the hazard package: worker processes
    start working while the parent is still importing them.
    """

    kind: str
    message: str
    file: str
    line: int
    code: str  # what was found (launchprof.model.hazard_codes), with the params it rests on
    params: dict[str, Param]
    details: dict[str, str]
    severity: Severity | None = None  # when not the kind's: info for host driver code under --all


@dataclass
class Collector:
    """Findings from all trees, deduplicated by place and message, with suppressions counted."""

    root: Path
    strict: bool = False
    hazards: list[Found] = field(default_factory=list)
    suppressed: int = 0
    skipped: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    walked: dict[tuple, FunctionFacts | None] = field(default_factory=dict)
    contexts: dict[int, int] = field(default_factory=dict)
    _seen: set[tuple] = field(default_factory=set)
    _relative: dict[str, str] = field(default_factory=dict)  # source path -> report path

    def relative(self, path: str) -> str:
        """A source file's path in the report (resolving it once: it is the same for every finding)."""
        found = self._relative.get(path)
        if found is None:
            found = self._relative[path] = relative_to_root(os.path.abspath(path), self.root)
        return found

    def walk(self, ref: FunctionRef, params: dict, follow: bool, infer: bool = False) -> FunctionFacts | None:
        """Walk one function; one that cannot be walked is skipped and named, never a traceback.

        ``infer``: the function is checked as a root, so an unannotated argument its code
        uses only as a Python number is one (:mod:`launchprof.lint.scalar_args`); the function
        is then walked again with it as a number, which is rare enough to cost nothing.
        """
        try:
            facts = Walker(ref, params, follow).run()
            numbers = scalar_params(ref, params, facts.calls) if infer else {}
            return Walker(ref, {**params, **numbers}, follow).run() if numbers else facts
        except RecursionError:
            self.skipped.append(f"{ref.display} (nested too deeply)")
        except Exception as exc:  # a construct lint does not know must not stop the whole check
            self.skipped.append(f"{ref.display} (lint could not read it: {type(exc).__name__}: {exc})")
        return None

    def check_tree(self, root: FunctionRef) -> None:
        """Walk the target and everything it calls that lint can read, then run every rule."""
        queue: list[tuple[FunctionRef, dict, tuple[str, ...]]] = [(root, root_params(root, is_target=True), (root.qualname,))]
        tree: list[FunctionFacts] = []
        chains: dict[int, tuple[str, ...]] = {}
        in_tree: set[tuple] = set()
        while queue:
            ref, params, chain = queue.pop(0)
            is_root = len(chain) == 1
            key = (id(ref.node), tuple(sorted((name, val.kind, val.origin) for name, val in params.items())), is_root)
            if key in in_tree:
                continue
            in_tree.add(key)
            if key not in self.walked:
                if self.contexts.get(id(ref.node), 0) >= MAX_CONTEXTS:
                    continue
                self.contexts[id(ref.node)] = self.contexts.get(id(ref.node), 0) + 1
                self.walked[key] = self.walk(ref, params, follow=True, infer=is_root)
            facts = self.walked[key]
            if facts is None:
                continue
            tree.append(facts)
            chains.setdefault(id(facts), chain)
            queue.extend((callee, callee_params(callee, bound), (*chain, callee.qualname)) for callee, bound in facts.callees)
        whole = Tree(root, tuple(tree))
        for facts in tree:
            self.run_rules(facts, whole, chains[id(facts)])
            self.note_unresolved(facts)

    def check_alone(self, ref: FunctionRef, driver: str | None = None) -> list[FunctionRef]:
        """``--all``: one function on its own; returns the functions defined inside it.

        ``driver``: the function is host driver code (:mod:`launchprof.lint.driver`), run from
        ``driver`` ("" for the ``__main__`` block): its findings are information only.
        """
        facts = self.walk(ref, root_params(ref, is_target=ref.is_target), follow=False, infer=True)
        if facts is None:
            return []
        self.run_rules(facts, Tree(ref, (facts,)), (ref.qualname,), driver)
        return facts.nested

    def run_rules(self, facts: FunctionFacts, tree: Tree, chain: tuple[str, ...], driver: str | None = None) -> None:
        for rule in RULES:
            for finding in rule(facts, tree):
                self.add(facts, finding, chain, driver)

    def note_unresolved(self, facts: FunctionFacts) -> None:
        """Calls lint could not follow: listed in the footer, warnings under ``--strict``."""
        source = facts.ref.module.source
        for node, why in facts.unresolved:
            where = f"{self.relative(source.path)}:{node.lineno}"  # type: ignore[attr-defined]
            entry = f"{where} `{text(node, 40)}` ({why})"
            if entry in self.unresolved:
                continue
            self.unresolved.append(entry)
            if self.strict:
                params: dict[str, Param] = {"call": text(node, 60), "why": why}
                self.add(facts, Finding(UNRESOLVED_KIND, node.lineno, HazardCode.LINT_CALL_NOT_FOLLOWED, params), ())  # type: ignore[attr-defined]

    def add(self, facts: FunctionFacts, finding: Finding, chain: tuple[str, ...], driver: str | None = None) -> None:
        source = facts.ref.module.source
        message = hazard_message(finding.code, finding.params)
        key = (source.path, finding.line, finding.kind, message)
        if key in self._seen:
            return
        self._seen.add(key)
        line = source.line(finding.line)
        if is_suppressed(line, finding.kind):
            self.suppressed += 1
            return
        details = {"function": facts.ref.qualname, "code": line.strip()}
        params = dict(finding.params)
        if len(chain) > 1:
            calls = [*chain, f"{os.path.basename(source.path)}:{finding.line}"]
            details["call_chain"] = " → ".join(calls)
            params[Placed.CALL_CHAIN] = calls
        severity: Severity | None = None
        if driver is not None:
            severity = Severity.INFO
            params |= {Placed.DRIVER: driver, Placed.DRIVER_FUNCTION: facts.ref.qualname}
        if len(params) > len(finding.params):
            message = hazard_message(finding.code, params)
        self.hazards.append(Found(finding.kind, message, self.relative(source.path), finding.line, finding.code.value, params, details, severity))
