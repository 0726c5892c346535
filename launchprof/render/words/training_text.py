"""Words for a training step that did not capture whole: the fix a figure assumes ("once
fixed: del loss"), what launchprof detached to measure it, and the partial capture.

Every sentence about ``Report.assumes_fix`` and ``Report.partial_capture`` is written here;
the section builder (launchprof.render.partial_text) and the figures (launchprof.render.figures)
place them in each format. Locations arrive written (``train.py:31``): paths are the
renderer's.
"""

from __future__ import annotations

from typing import Any

from launchprof.model.training_records import AssumedFixCode, PartialSkip
from launchprof.render.words import format as fmt

# The report fields a fix's figures name (``assumes_fix[].figures``), in words.
FIGURES = {
    "replay": "the replay step", "speedup": "the speedup", "breakeven_replays": "the payback", "validation": "the validation",
    "capture_snippet": "the capture snippet", "buckets": "the bucket plan", "partial_capture": "the partial capture",
}  # fmt: skip

REASONS: dict[str, str] = {
    PartialSkip.NO_MODULE: "the step calls no torch.nn.Module with parameters directly",
    PartialSkip.DISTRIBUTED: "several ranks: launchprof makes no extra calls that every rank would have to make alike",
    PartialSkip.KEYWORD_ARGUMENTS: "it is called with keyword arguments; a graphed module takes its tensors by position",
    PartialSkip.NON_TENSOR_ARGUMENTS: "it is called with arguments that are not tensors; a graphed module takes tensors only",
    PartialSkip.CALLED_TWICE: "the step calls it more than once; one graph's outputs cannot serve two calls before backward",
    PartialSkip.HOOKS: "it has hooks, which make_graphed_callables refuses",
    PartialSkip.NOT_CUDA: "its parameters or arguments are not on the GPU",
    PartialSkip.GRAPHING_FAILED: "make_graphed_callables failed on it",
    PartialSkip.STEP_FAILED: "the step failed with it graphed",
    PartialSkip.RECORDING_FAILED: "the call that finds the step's modules failed",
    PartialSkip.TIMING_FAILED: "timing the step failed",
    PartialSkip.NOT_TRIED: "not tried: a larger module was measured",
}


def _names(fix: Any) -> list[str]:
    return [v.name for v in fix.variables if v.name]


def fix_action(fix: Any) -> str:
    """What the user's code has to do, whichever way it does it (``del loss`` in the caller or
    ``return loss.detach()`` in the step, the fix the hazard writes): ``loss released``."""
    names = _names(fix)
    if fix.code == AssumedFixCode.DETACHED and names:
        return ", ".join(dict.fromkeys(names)) + " released"
    return "release the kept outputs"


def once_fixed(report: Any, field: str) -> str:
    """" (once fixed: loss released)" after a figure measured after a fix, else nothing."""
    fixes = [f for f in getattr(report, "assumes_fix", None) or [] if field in f.figures]
    if not fixes:
        return ""
    return " (once fixed: " + "; ".join(fix_action(f) for f in fixes) + ")"


def verdict_clause(report: Any) -> str:
    """What the verdict's sentence adds: the fix its figures assume, or, for a step that
    does not capture whole, what graphing its largest module alone gained."""
    fixes = [f for f in getattr(report, "assumes_fix", None) or [] if "speedup" in f.figures]
    if fixes:
        return f" Measured once fixed ({'; '.join(fix_action(f) for f in fixes)}): the step captures only without the kept graph."
    p = getattr(report, "partial_capture", None)
    if report.replay is None and p is not None and p.status == "measured" and p.speedup is not None:
        sp = p.speedup
        return f" With `{p.module}`'s forward and backward graphed alone, the whole step runs {fmt.speedup(sp.median, sp.low, sp.high)} as fast."
    return ""


def released_sentence(fix: Any, places: list[str | None]) -> str:
    """What launchprof detached and why; ``places`` are the storing lines, written, one per variable."""
    held = []
    for v, where in zip(fix.variables, places):
        name = f"`{v.name}`" if v.name else "an output of an earlier call"
        detail = ", ".join(x for x in (f"kept at {where}" if where else None, f"graph ending in {v.grad_fn}" if v.grad_fn else None) if x)
        held.append(f"{name} ({detail})" if detail else name)
    what = ", ".join(held) or "outputs of earlier calls"
    head = (
        f"launchprof detached {what} for the measurement only: the previous call's autograd graph, kept alive this way, "
        "made capture fail. The values stay (a later .item() still reads them)."
    )
    names = list(dict.fromkeys(_names(fix)))
    release = f"`del {', '.join(names)}`" if fix.code == AssumedFixCode.DETACHED and names else "releasing the kept outputs"
    fix_text = f"{release} before the next call, or a step that returns a detached tensor"
    if not fix.figures:
        return f"{head} The step still did not capture; the fix stands: {fix_text}."
    figures = ", ".join(FIGURES.get(f, f) for f in fix.figures)
    return f"{head} The figures measured after it ({figures}) assume the fix: {fix_text}."


def reason_text(reason: str | None, error: str | None = None) -> str:
    text = REASONS.get(str(reason), str(reason or "unknown reason"))
    return f"{text} ({error})" if error else text


def module_text(p: Any, where: str | None) -> str:
    """"`model` (MLP, 1.05M parameters) at train.py:20"."""
    at = f" at {where}" if where else ""
    return f"`{p.module}` ({p.module_type}, {fmt.count(p.parameters)} parameters){at}"


def check_text(p: Any) -> str:
    if p.matches is None:
        return fmt.NA
    head = "outputs and updated state match" if p.matches else "outputs or updated state differ"
    return f"{head} (max |diff| {fmt.diff(p.max_abs_diff)})"


def partial_rows(p: Any, where: str | None) -> list[tuple[str, str]]:
    """The measured partial capture as (label, value) rows."""
    autocast = f", under autocast {p.autocast}" if p.autocast else ""
    sp = p.speedup
    return [
        ("Graphed (forward and backward)", module_text(p, where) + autocast),
        ("Whole step, eager", fmt.stats(p.eager_step_us)),
        (f"Whole step, `{p.module}` graphed", fmt.stats(p.graphed_step_us)),
        ("Speedup (eager / partly graphed)", fmt.speedup(sp.median, sp.low, sp.high) if sp else fmt.NA),
        ("Set-up (make_graphed_callables)", fmt.duration(p.setup_us)),
        ("One step, eager against graphed", check_text(p)),
    ]


def partial_title(p: Any) -> str:
    if p.status == "measured":
        return "The step's largest capturable part: its module's forward and backward graphed, the rest eager"
    return "Partial capture (forward and backward of the step's largest module): not measured"


def candidate_line(c: Any, where: str | None) -> str:
    at = f" at {where}" if where else ""
    return f"`{c.module}` ({c.module_type}, {fmt.count(c.parameters)} parameters){at}: {reason_text(c.reason, c.error)}"


def not_measured_lines(p: Any, places: list[str | None]) -> list[str]:
    """Why nothing was measured: the run's reason, or each module tried and why."""
    if not p.candidates:
        return [f"not measured: {reason_text(p.reason, p.error)}"]
    return [candidate_line(c, where) for c, where in zip(p.candidates, places)]


def measured_lines(report: Any, places: list[str | None]) -> list[str]:
    """Under a measured partial capture: the other modules and why they were not graphed,
    and the fix its figures assume."""
    p = report.partial_capture
    lines = [f"not graphed: {candidate_line(c, where)}" for c, where in zip(p.candidates, places) if c.reason]
    mark = once_fixed(report, "partial_capture")
    if mark:
        lines.append(f"measured after the release above{mark}")
    return lines


def snippet_caption(p: Any) -> str:
    return (
        f"Paste once, after `{p.module}` is built and before the training loop; the rest of the step "
        "(loss scaling, the optimizer) stays as it is, outside the graphs."
    )
