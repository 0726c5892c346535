"""A training step that did not capture whole: the report's ``assumes_fix`` and
``partial_capture`` from the worker's ``kept-graph`` and ``partial-capture`` events.

``assumes_fix`` records that launchprof detached the outputs the caller kept with their
autograd graph, and names the report fields measured after that: the renderers label
those figures "once fixed". ``partial_capture`` turns the interleaved timings of the step,
eager and with its largest module graphed, into step statistics and a speedup with its
95% interval (model/stats.py, as the main speedup), and writes the line to paste.
"""

from __future__ import annotations

import dataclasses

from launchprof.events.training_events import KeptGraphEvent, PartialCaptureEvent, SampleArgRow
from launchprof.model.core import Report
from launchprof.model.stats import speedup_of, stats_of
from launchprof.model.training_records import (
    KEPT_GRAPH_KIND, STATUS_MEASURED, AssumedFix, AssumedFixCode, KeptVariable, PartialCandidate, PartialCapture, SampleArg,
)  # fmt: skip
from launchprof.run.evidence import Evidence

# Report fields measured on the graph the retry captured.
CAPTURED_FIGURES = ("replay", "speedup", "breakeven_replays", "validation", "capture_snippet")


def with_training(report: Report, ev: Evidence) -> Report:
    fixes, partial = assumed_fixes(ev, report), partial_capture(ev)
    if not fixes and partial is None:
        return report
    return dataclasses.replace(report, assumes_fix=fixes, partial_capture=partial)


def assumed_fixes(ev: Evidence, report: Report | None = None) -> list[AssumedFix]:
    """The release of a kept autograd graph, when launchprof detached something."""
    kept = ev.kept_graph
    if kept is None or not any(t.released for t in kept.tensors):
        return []
    figures = [f for f in CAPTURED_FIGURES if kept.captured and (report is None or getattr(report, f, None) is not None)]
    if kept.captured and ev.buckets:
        figures.append("buckets")
    if ev.partial_capture is not None and ev.partial_capture.status == STATUS_MEASURED:
        figures.append("partial_capture")
    return [AssumedFix(kind=KEPT_GRAPH_KIND, code=AssumedFixCode.DETACHED.value, variables=kept_variables(kept), figures=figures)]


def kept_variables(kept: KeptGraphEvent) -> list[KeptVariable]:
    out = []
    for t in kept.tensors:
        if not t.released:
            continue
        where = t.where
        out.append(KeptVariable(
            name=t.name, holder_kind=t.holder_kind, grad_fn=t.grad_fn,
            file=where.file if where else None, line=where.line if where else None, code=where.code if where else None,
        ))  # fmt: skip
    return out


def partial_capture(ev: Evidence) -> PartialCapture | None:
    e = ev.partial_capture
    if e is None:
        return None
    candidates = [
        PartialCandidate(
            module=c.module, module_type=c.module_type, parameters=c.parameters, file=c.site.file if c.site else None,
            line=c.site.line if c.site else None, reason=c.reason, error=c.error,
        )  # fmt: skip
        for c in e.candidates
    ]
    if e.status != STATUS_MEASURED:
        return PartialCapture(status=e.status, reason=e.reason, error=e.error, candidates=candidates)
    site = e.site
    return PartialCapture(
        status=e.status, module=e.module, module_type=e.module_type, parameters=e.parameters,
        file=site.file if site else None, line=site.line if site else None, code=site.code if site else None,
        args=[SampleArg(expr=a.expr, shape=list(a.shape), dtype=a.dtype, requires_grad=a.requires_grad) for a in e.args],
        autocast=e.autocast, eager_step_us=stats_of(e.eager_us), graphed_step_us=stats_of(e.graphed_us),
        speedup=speedup_of(e.eager_us, e.graphed_us), setup_us=e.setup_us, matches=e.match, max_abs_diff=e.max_abs_diff,
        snippet=graphed_snippet(e), candidates=candidates, eager_samples_us=list(e.eager_us),
        graphed_samples_us=list(e.graphed_us), timing="burst",
    )  # fmt: skip


def _sample_name(arg: SampleArgRow, i: int) -> str:
    base = arg.expr if arg.expr and arg.expr.isidentifier() else f"arg{i}"
    return f"sample_{base}"


def _sample_value(arg: SampleArgRow) -> str:
    shape = ", ".join(str(n) for n in arg.shape) + ("," if len(arg.shape) == 1 else "")
    floating = arg.dtype.startswith(("float", "bfloat", "complex"))
    make = "torch.randn" if floating else "torch.zeros"
    grad = ", requires_grad=True" if arg.requires_grad else ""
    return f"{make}(({shape}), dtype=torch.{arg.dtype}, device=\"cuda\"{grad})"


def graphed_snippet(e: PartialCaptureEvent) -> str | None:
    """The lines to paste once, after the module is built and before the loop: samples of
    the call's arguments (shape, dtype, requires_grad), then the module graphed in place."""
    if not e.module:
        return None
    lines = ["import torch", ""]
    names = []
    for i, arg in enumerate(e.args):
        name = _sample_name(arg, i)
        names.append(name)
        lines.append(f"{name} = {_sample_value(arg)}")
    call = f"{e.module} = torch.cuda.make_graphed_callables({e.module}, ({', '.join(names)}{',' if len(names) == 1 else ''}))"
    if e.autocast:
        lines += [f"with torch.autocast(\"cuda\", dtype=torch.{e.autocast}, cache_enabled=False):", f"    {call}"]
    else:
        lines.append(call)
    return "\n".join(lines) + "\n"
