"""reallocated-input: tensors the target reads that are new allocations each call.

As an argument, launchprof (and the user's graphed code) copies it into the static
buffer: info, with what the copy costs. Read as a global or attribute the script
rebinds, the graph silently keeps reading the old memory: error.
"""

from __future__ import annotations

import ast
import re

from launchprof.events.record import Site
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import around, first_use, function_at, hazard, line_at, target_site
from launchprof.model.hazard_identity import without_comment
from launchprof.hazards.fixes.state_fixes import rebinding_site
from launchprof.model.hazard_records import Hazard

_CURRENT = re.compile(r"^\[(\d+)\](.*)$")
_WRAPPED = re.compile(r"^\[0\]\[(\d+)\](.*)$")


def reallocated_arguments(ev: Evidence) -> dict[str, int]:
    """Argument paths that are a new tensor each call, with their size in bytes.

    The one definition is the worker's: it holds a weak reference to each argument's first
    tensor and calls an argument moved when a later call passes another tensor or another
    address (a fresh tensor can land at the same address). It reports that set as the
    ``capture`` event's ``moved_args``, the inputs it copies into the static buffers. The
    analysis does not second-guess it from the recorded pointers. Runs recorded before the
    worker reported it have no moved arguments.

    The worker reports canonical paths (``[0]``, ``[1][2]``); they are returned as the
    caller's names (``tokens``, ``extras[2]``), the paths the ``call`` events record and
    size. A path that names no recorded tensor is kept as it is."""
    moved = list(ev.capture.moved_args) if ev.capture is not None else []
    sizes: dict[str, int] = {}
    for call in ev.calls:
        for leaf in call.args:
            if leaf.kind == "tensor":
                sizes[str(leaf.path)] = leaf.bytes or 0
    named = argument_names(ev, [p for p in moved if p not in sizes])
    out: dict[str, int] = {}
    for p in moved:
        name = named.get(p, p)
        out[name] = sizes.get(name, 0)
    return out


def reallocated_inputs(ev: Evidence) -> list[Hazard]:
    out = []
    moved = reallocated_arguments(ev)
    if moved:
        params: dict[str, Param] = {"arguments": sorted(moved), "bytes": sum(moved.values())}
        site = ev.call_site or target_site(ev.target)
        out.append(hazard("reallocated-input", HazardCode.REALLOCATED_ARGUMENTS, params, site, severity="info", arguments=sorted(moved)))
    names = sorted({n for r in ev.state_reallocs for n in r.names})
    failed = any(not v.match for v in ev.validations)
    for name in names:
        site = first_use(ev.target, name) or target_site(ev.target)
        rebound = _rebound_at(ev, name)
        params: dict[str, Param] = {"name": name, "validation_differs": failed}
        if rebound:
            params |= {"rebound_file": rebound["file"], "rebound_line": rebound["line"], "rebound_code": rebound["code"]}
        out.append(hazard("reallocated-input", HazardCode.REBOUND_STATE, params, site, severity="error", variable=name, rebound_at=rebound))
    return out + mutated_arguments(ev)


def _rebound_at(ev: Evidence, name: str) -> dict | None:
    """Where ``name`` is bound to a new tensor: the target's file first, then the files of
    the functions the probe call ran, then the file of the call site."""
    files: list[str] = []
    for file in [ev.target.file if ev.target else None, *(f.file for f in (ev.probe.functions if ev.probe is not None else [])), ev.call_site.file if ev.call_site else None]:
        if file and file not in files:
            files.append(str(file))
    found = rebinding_site(files, name.split(".")[-1])
    if found is None:
        return None
    file, line = found
    return {"file": file, "line": line, "code": without_comment(line_at(file, line))}


def argument_names(ev: Evidence, paths: list[str]) -> dict[str, str]:
    """The worker's canonical argument paths as the caller's names (``[1]`` -> ``stats``).

    Canonical paths index the arguments in parameter order (``[i]...``); runs recorded by
    an earlier worker wrapped them once more (``[0][i]...``). The reading kept is the one
    that names a tensor the first call actually passed, the current form first."""
    leaves = ev.calls[0].args if ev.calls else []
    order: list[str] = []
    for leaf in leaves:
        top = re.split(r"[\[.]", str(leaf.path if leaf.path is not None else ""), maxsplit=1)[0]
        if top and top not in order:
            order.append(top)
    tensors = {str(leaf.path) for leaf in leaves if leaf.kind == "tensor"}
    named = {}
    for p in paths:
        for form in (_CURRENT, _WRAPPED):
            m = form.match(p)
            if m and int(m.group(1)) < len(order) and order[int(m.group(1))] + m.group(2) in tensors:
                named[p] = order[int(m.group(1))] + m.group(2)
                break
    return named


def mutated_arguments(ev: Evidence) -> list[Hazard]:
    """An argument the target changes in place that is also a new tensor each call. Under a
    graph the static copy changes and the caller's tensor does not."""
    moved = set(ev.capture.moved_args if ev.capture is not None else [])
    both = sorted(moved & set(ev.mutations.args))
    out = []
    for path, name in argument_names(ev, both).items():
        site = _mutation_site(ev, name) or first_use(ev.target, name) or target_site(ev.target)
        out.append(hazard("reallocated-input", HazardCode.MUTATED_ARGUMENT, {"name": name}, site, severity="warning", argument=name, mutated=True, path=path))
    return out


def _mutation_site(ev: Evidence, name: str) -> Site | None:
    """The first line of the target that writes ``name`` in place (``name.op_(``, ``name[...] =``)."""
    if ev.target is None or not ev.target.file:
        return None
    file = ev.target.file
    node = function_at(file, int(ev.target.line or 0))
    if node is None:
        return None
    for sub in sorted(ast.walk(node), key=lambda n: getattr(n, "lineno", 0)):
        hit = (
            isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr.endswith("_")
            and not sub.func.attr.startswith("_") and isinstance(sub.func.value, ast.Name) and sub.func.value.id == name
        ) or (
            isinstance(sub, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
            )
        )
        if hit:
            return Site(file=file, line=sub.lineno, code=line_at(file, sub.lineno).strip(), snippet=around(file, sub.lineno))
    return None
