"""The capture failures whose cause torch and CUDA named (launchprof.common.capture_causes),
each filed at the line to change: a training step's kept autograd graph (at the caller's
line that holds it), its optimizer built without capturable=True (at its constructor), its
GradScaler (at ``scaler.step(...)``, the library frame kept as detail), and work queued on
the legacy default stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from launchprof.common.capture_causes import GRAD_SCALER_FILE, optimizer_named, stream_zero_uses
from launchprof.events.capture_events import CaptureEvent, HeldGraph, OptimizerSeen
from launchprof.events.record import Site
from launchprof.hazards.common import code_text, hazard, is_library_file, target_site
from launchprof.model.findings import Param
from launchprof.model.stats import ratio_of_medians
from launchprof.model.training_records import STATUS_MEASURED
from launchprof.model.hazard_codes import HazardCode
from launchprof.model.hazard_records import Hazard
from launchprof.run.evidence import Evidence

# The kinds of a capture that failed for a training step's own reasons.
TRAINING_KINDS = frozenset({"kept-autograd-graph", "optimizer-not-capturable", "grad-scaler"})


def _at(site: Site | None) -> dict[str, Any] | None:
    if site is None or not site.file:
        return None
    return {"file": site.file, "line": site.line, "code": site.code}


def _failed(cap: CaptureEvent) -> dict[str, Param]:
    return {"failed_code": code_text(cap) or None, "failed_line": cap.line if cap.file else None}


def _surfaced(ev: Evidence, cap: CaptureEvent) -> Site | None:
    return cap if cap.file else target_site(ev.target)


def _holder(ev: Evidence, held: list[HeldGraph]) -> HeldGraph | None:
    """The name to fix first: the one the call itself binds (``loss = step(...)``), else the first."""
    call = ev.call_site
    bound = [g for g in held if call is not None and (g.file, g.line) == (call.file, call.line)]
    return (bound or held or [None])[0]


def _released_holders(ev: Evidence) -> list[HeldGraph]:
    """The names the release found holding the graph (worker/graph_release.py): the same
    question asked again when launchprof detached them, from the outputs it watched."""
    kept = ev.kept_graph
    rows = kept.tensors if kept is not None else []
    return [
        HeldGraph(file=r.where.file, line=r.where.line, code=r.where.code, function=r.scope, name=r.name,
                  holder_kind=r.holder_kind, scope=r.scope, grad_fn=r.grad_fn)
        for r in rows if r.name and r.where is not None and r.where.file
    ]  # fmt: skip


def kept_graph(ev: Evidence, cap: CaptureEvent, evidence: str | None) -> Hazard:
    held = [g for g in (cap.held_graphs or _released_holders(ev)) if g.file and g.name and not is_library_file(g.file)]
    first = _holder(ev, held)
    params: dict[str, Param] = {
        "name": first.name if first else None, "names": [str(g.name) for g in held], "holder_kind": first.holder_kind if first else None,
        "scope": first.scope if first else None, "grad_fn": first.grad_fn if first else None, "evidence": evidence,
        "cuda_errors": list(cap.cuda_errors), **_failed(cap),
    }
    call = ev.call_site
    bound = first is not None and call is not None and (first.file, first.line) == (call.file, call.line)
    target = ev.target
    details = {
        "failed_at": _at(cap), "variable": first.name if first else None, "bound_by_call": bound,
        "target_at": {"file": target.file, "line": target.line} if target is not None and target.file else None,
    }
    return hazard("kept-autograd-graph", HazardCode.KEPT_AUTOGRAD_GRAPH, params, first or _surfaced(ev, cap), severity="error", **details)


def optimizer_not_capturable(ev: Evidence, cap: CaptureEvent, evidence: str | None) -> Hazard:
    opt = cap.optimizer or OptimizerSeen()
    name = opt.name or optimizer_named(cap.chain)
    built = opt if opt.file and opt.line and not is_library_file(opt.file) else None
    params: dict[str, Param] = {"optimizer": name, "variable": opt.variable, **_failed(cap)}
    details = {"optimizer": name, "built_at": _at(built), "failed_at": _at(cap)}
    return hazard("optimizer-not-capturable", HazardCode.OPTIMIZER_NOT_CAPTURABLE, params, built or _surfaced(ev, cap), severity="error", **details)


def grad_scaler(ev: Evidence, cap: CaptureEvent, evidence: str | None) -> Hazard:
    frames = [f for f in cap.frames or [] if (f.file or "").replace("\\", "/").endswith(GRAD_SCALER_FILE)]
    lib = frames[-1] if frames else None
    named = [f for f in frames if f.function and not f.function.startswith("<")]  # `_maybe_opt_step`, not its `<genexpr>`
    function = named[-1].function if named else lib.function if lib else None
    opt = cap.optimizer or OptimizerSeen()
    built = opt if opt.file and opt.line and not is_library_file(opt.file) else None
    params: dict[str, Param] = {
        "code": code_text(cap) or "scaler.step(...)", "library_file": GRAD_SCALER_FILE if lib else None,
        "library_line": lib.line if lib else None, "library_function": function,
        "optimizer": opt.name, "variable": opt.variable,
        "partial_speedup": _partial_speedup(ev),  # forward and backward graphed alone, where measured
    }
    fused = bool(opt.accepts_fused and opt.scaler_skips_read_when_fused and not opt.fused)
    details = {
        "library_frame": {"file": lib.file, "line": lib.line, "function": function} if lib else None,
        "fused_option": fused, "built_at": _at(built),
    }
    return hazard("grad-scaler", HazardCode.GRAD_SCALER, params, _surfaced(ev, cap), severity="error", **details)


def _partial_speedup(ev: Evidence) -> float | None:
    """The step's speedup with its largest module graphed alone (worker/partial_capture.py):
    the ratio of medians the report's ``partial_capture`` section shows as its point, without
    that section's bootstrap interval, which the fix does not cite; None where not measured."""
    e = ev.partial_capture
    if e is None or e.status != STATUS_MEASURED or not e.eager_us or not e.graphed_us:
        return None
    eager, graphed = np.asarray(e.eager_us, dtype=float), np.asarray(e.graphed_us, dtype=float)
    return float(ratio_of_medians(eager, graphed)) if np.median(graphed) > 0 else None


def legacy_stream(ev: Evidence, cap: CaptureEvent, evidence: str | None) -> Hazard:
    inner = (cap.frames or [None])[-1]
    op = inner.function if inner is not None and is_library_file(inner.file) else None
    entered = (stream_zero_uses(ev.probe) or [None])[0]
    params: dict[str, Param] = {
        "code": code_text(cap) or None, "op": op, "cuda_errors": list(cap.cuda_errors), "evidence": evidence,
        "stream_code": (code_text(entered) or None) if entered else None, "stream_line": entered.line if entered else None,
    }
    return hazard("legacy-stream", HazardCode.LEGACY_STREAM, params, _surfaced(ev, cap), severity="error", op=op)


BUILDERS: dict[str, Callable[[Evidence, CaptureEvent, str | None], Hazard]] = {
    "kept-autograd-graph": kept_graph,
    "optimizer-not-capturable": optimizer_not_capturable,
    "grad-scaler": grad_scaler,
    "legacy-stream": legacy_stream,
}
