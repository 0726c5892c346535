"""data-dependent-control-flow: the kernel sequence differs between calls of the same shape."""

from __future__ import annotations

import ast

from launchprof.events.record import Site
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import around, function_at, hazard, line_at, target_site
from launchprof.hazards.scalars import scalar_history
from launchprof.hazards.shapes import varying_shapes
from launchprof.model.hazard_records import Hazard


def data_dependent_control_flow(ev: Evidence) -> list[Hazard]:
    """From the profiled calls' kernel sequences; without an eager trace, from the digests of
    the aten ops those calls ran (``op-sequence`` events): one rule, one hazard either way."""
    if not ev.kernel_sequences:
        return _from_op_sequences(ev)
    seqs = [s for s in ev.kernel_sequences if s]
    if len(seqs) < 2 or all(s == seqs[0] for s in seqs) or varying_shapes(ev):
        return []
    params: dict[str, Param] = {"kernel_counts": sorted({len(s) for s in seqs})}
    site = _branch_on_varying(ev) or target_site(ev.target)
    return [hazard("data-dependent-control-flow", HazardCode.KERNEL_SEQUENCE_DIFFERS, params, site, kernel_counts=[len(s) for s in seqs])]


def _from_op_sequences(ev: Evidence) -> list[Hazard]:
    """The calls ran different aten op sequences while their shapes stayed: the step branches
    on its data, as differing kernel sequences would show in a trace."""
    ops = sorted(getattr(ev, "op_sequences", None) or [], key=lambda o: o.index)
    if len(ops) < 2 or len({o.digest for o in ops}) < 2 or varying_shapes(ev):
        return []
    params: dict[str, Param] = {"op_counts": sorted({int(o.count) for o in ops})}
    site = _branch_on_varying(ev) or target_site(ev.target)
    return [hazard("data-dependent-control-flow", HazardCode.OP_SEQUENCE_DIFFERS, params, site, op_counts=[int(o.count) for o in ops])]


def _branch_on_varying(ev: Evidence) -> Site | None:
    """The first ``if``/``while`` in the target that tests an argument whose value varies."""
    varying = {p.split("[")[0] for p, v in scalar_history(ev).items() if len(set(map(repr, v))) > 1}
    if ev.target is None or not ev.target.file:
        return None
    file = ev.target.file
    node = function_at(file, int(ev.target.line or 0))
    if node is None:
        return None
    for sub in ast.walk(node):
        if isinstance(sub, (ast.If, ast.While, ast.IfExp)):
            names = {n.id for n in ast.walk(sub.test) if isinstance(n, ast.Name)}
            if names & varying or not varying:
                return Site(file=file, line=sub.lineno, code=line_at(file, sub.lineno).strip(), snippet=around(file, sub.lineno))
    return None
