"""The note of a written fix (``models.Fix``): each :class:`~launchprof.model.findings.FixCode` in
words, from the fix's ``params``. The fix writers (launchprof.hazards.fixes) call
:func:`fix_note` to fill ``Fix.note``, so a JSON reader has both the sentence and the record.

A fix without a code (a report written before fixes had one), or one whose code or params
this launchprof cannot read, keeps the note it was written with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchprof.model.findings import FixCode
from launchprof.render.words.fix_reasons import REASONS, code_names, line_list
from launchprof.render.words.format import number

Params = dict[str, Any]
SENTENCES: dict[str, Callable[[Params], str]] = {}


def sentence(code: FixCode) -> Callable[[Callable[[Params], str]], Callable[[Params], str]]:
    def register(write: Callable[[Params], str]) -> Callable[[Params], str]:
        SENTENCES[code.value] = write
        return write

    return register


def fix_note(code: FixCode | str, params: Params, rule: str | None = None) -> str:
    """The note for a fix with ``code`` and ``params``; ``rule`` is the hazard kind's general
    rule, which a fix that could not be written ends with."""
    text = SENTENCES[str(code)](params)
    if str(code) != FixCode.CANNOT.value:
        return text
    return f"{text}. The general rule: {rule}" if rule else f"{text}."


def fix_sentence(fix: Any) -> str:
    """A stored fix's note, written from its record where this launchprof can."""
    code = getattr(fix, "code", "") or ""
    write = SENTENCES.get(code)
    if write is None or code == FixCode.CANNOT.value:  # the rule is the stored note's
        return str(fix.note)
    try:
        return write(fix.params)
    except (KeyError, TypeError, ValueError):
        return str(fix.note)


def cannot_head(fix: Any) -> str | None:
    """"launchprof cannot write the fix for this line (why)" for a fix that was not written, or
    None when the fix has no such record."""
    if getattr(fix, "code", "") != FixCode.CANNOT.value:
        return None
    try:
        return SENTENCES[FixCode.CANNOT.value](fix.params)
    except (KeyError, TypeError, ValueError):
        return None


# --- no fix written ----------------------------------------------------------------------


@sentence(FixCode.CANNOT)
def _cannot(p: Params) -> str:
    why = REASONS[str(p.get("reason") or "")](p)
    return f"No fix is written for this line: {why}" if why else "launchprof cannot write the fix for this line"


def cannot_line(fix: Any) -> str | None:
    """The line a report prints for a fix that was not written: its one reason, or, without
    one, a pointer to the kind's general rule (printed once, under the fixes)."""
    head = cannot_head(fix)
    if head is None:
        return None
    return f"{head}." if (fix.params or {}).get("reason") else f"{head}: the general rule is below"


@sentence(FixCode.MISMATCH_CAUSES)
def _mismatch_causes(p: Params) -> str:
    where = ", ".join(f"{kind} at line {line}" for kind, line in zip(p["kinds"], p["lines"]))
    fixed = p.get("fixed", len(p["kinds"]))
    if not fixed:  # found, but none with a written fix: the rules under each say what to change
        return f"The mismatch follows from the frozen state found here ({where}): change that state as its rule below says; the mismatch needs no fix of its own."
    return f"The mismatch follows from the frozen state found here ({where}): apply those fixes first; it needs none of its own."


# --- branches ------------------------------------------------------------------------------


def _scalars(p: Params) -> str:
    scalars = p.get("scalars") or []
    return f" {code_names(scalars)} must then be a device tensor (updated in place before each replay), not a Python number." if scalars else ""


@sentence(FixCode.WHERE_SELECT)
def _where_select(p: Params) -> str:
    return "Compute both values and select on the device: no host read, one kernel sequence for every call." + _scalars(p)


@sentence(FixCode.WHERE_RETURN)
def _where_return(p: Params) -> str:
    return "Both branches return: return both values selected on the device with torch.where, one kernel sequence for every call." + _scalars(p)


@sentence(FixCode.COND_BRANCHES)
def _cond_branches(p: Params) -> str:
    return (
        "Both branches do real work: torch.cond captures each as a sub-graph (CUDA conditional nodes) "
        "and chooses on the device at replay." + _scalars(p)
    )


# --- masks and syncs -----------------------------------------------------------------------


@sentence(FixCode.MASK_LATER_USE)
def _mask_later_use(p: Params) -> str:
    return (
        f"A fixed-shape form: compute on every row and select with torch.where (lines {p['line']} and {p['use_line']}). "
        "For a mixture of experts this runs every expert on all rows, then selects each row's expert: "
        "more arithmetic, no host read, one graph."
    )


@sentence(FixCode.NONZERO_MASK)
def _nonzero_mask(p: Params) -> str:
    return "nonzero returns a size only the host can read. Keep the boolean mask (a fixed shape) and select with torch.where, or give a fixed capacity and pad."


@sentence(FixCode.MASK_ASSIGN)
def _mask_assign(p: Params) -> str:
    return "Boolean-mask indexing has a data-dependent size. Compute on every row and select with torch.where: fixed shapes, no host read."


@sentence(FixCode.MASK_READ)
def _mask_read(p: Params) -> str:
    return "Boolean-mask indexing has a data-dependent size. Keep the full shape and zero the rows the mask drops (count them with mask.sum(), which stays on the device)."


@sentence(FixCode.SYNC_OUTSIDE)
def _sync_outside(p: Params) -> str:
    return "A graph cannot wait on the GPU inside itself. Synchronise outside the target, after graph.replay() (or not at all: reading a result synchronises)."


@sentence(FixCode.PRINT_OUTSIDE)
def _print_outside(p: Params) -> str:
    return "Printing a tensor copies it to the host. Return the value and print it outside the target after the replay."


@sentence(FixCode.TO_HOST_AFTER_REPLAY)
def _to_host_after_replay(p: Params) -> str:
    reads = ", ".join(str(r) for r in p["reads"])
    return f"Keep the tensor on the device inside the target (drop {reads}); copy it to the host after the replay, outside the target, where the wait costs nothing extra."


@sentence(FixCode.KEEP_ON_DEVICE)
def _keep_on_device(p: Params) -> str:
    reads = ", ".join(str(r) for r in p["reads"])
    return f"Keep the value on the device (drop {reads}): a 0-d tensor works in the same arithmetic, and the graph reads it at replay."


@sentence(FixCode.KEEP_ON_DEVICE_LATER_USE)
def _keep_on_device_later_use(p: Params) -> str:
    reads = ", ".join(str(r) for r in p["reads"])
    uses = p["use_lines"]
    where = f"line{'s' if len(uses) > 1 else ''} {line_list(uses)}"
    value = p.get("value")
    kept = f"use `{value}` where `{p['name']}` was" if value else f"`{p['name']}` is then a 0-d tensor"
    return (
        f"Keep the value on the device: drop {reads}; {kept}. {where.capitalize()} used it as a Python number, so it is "
        "rewritten too: Python max/min against a number calls bool() on a tensor, which capture cannot do, and "
        "clamp_min/clamp_max keep the bound on the device."
    )


# --- copies, state, streams ----------------------------------------------------------------


@sentence(FixCode.PINNED_COPY)
def _pinned_copy(p: Params) -> str:
    return (
        "Capture cannot record a copy from pageable host memory. Allocate a pinned staging tensor and its "
        "device copy once, outside the step; inside it, copy_ with non_blocking=True. Refill the pinned "
        "tensor in the caller before each replay when the host data changes."
    )


@sentence(FixCode.SCALAR_TENSOR)
def _scalar_tensor(p: Params) -> str:
    name, tensor = p["name"], p["tensor"]
    return (
        f"The graph keeps the value `{name}` had at capture. Allocate `{tensor} = torch.tensor({name}, device='cuda')` once, "
        f"pass it in place of `{name}`, and update it in place (fill_/copy_) before each replay, outside the graph."
    )


@sentence(FixCode.REBIND_IN_PLACE)
def _rebind_in_place(p: Params) -> str:
    name = p["name"]
    text = (
        f"Line {p['line']} binds `{name}` to a new tensor, but the graph keeps reading the old one's memory. "
        "Allocate it once, before the first call, and update it in place from then on, so its address never changes."
    )
    kept_by = p.get("kept_by")
    if kept_by:  # an in-place update is seen through every reference kept to the tensor
        text += (
            f" Caution: `{kept_by}` keeps `{name}` (line {p['kept_line']}); updated in place, every entry it holds is then "
            f"the same tensor, so keep `{name}.clone()` there."
        )
    return text


@sentence(FixCode.MUTATED_ARGUMENT)
def _mutated_argument(p: Params) -> str:
    argument = p["argument"]
    return (
        f"This line changes `{argument}` in place, but `{argument}` is a new tensor each call, so a graph "
        f"writes into its static copy and the caller's tensor never changes. Pass the same tensor every call, "
        f"or copy the static buffer back after each replay."
    )


@sentence(FixCode.DEVICE_COUNTER)
def _device_counter(p: Params) -> str:
    return f"Replay does not run Python: keep `{p['name']}` in a device tensor updated in place, so each replay advances it."


@sentence(FixCode.MOVED_TO_CALLER)
def _moved_to_caller(p: Params) -> str:
    return "Replay does not run Python: do this in the caller after each replay, on a .clone() of the output when it is kept."


@sentence(FixCode.MOVED_TOGETHER)
def _moved_together(p: Params) -> str:
    call = f" (line {p['call_line']})" if p.get("call_line") else ""
    return (
        f"Replay does not run Python, and lines {line_list(p['lines'])} depend on each other through {code_names(p['names'])}: move them "
        f"together to the caller, after each call of the step{call}, so each call advances them once. "
        "Moving one alone (or keeping one in a device tensor) would leave the other reading a value frozen at capture."
    )


@sentence(FixCode.CLONE_KEPT)
def _clone_kept(p: Params) -> str:
    return (
        f"Keep a clone: `{p['holder']}` then holds its own copy of each step's `{p['output']}`, which the next replay "
        "cannot overwrite."
    )


@sentence(FixCode.CUDA_RNG)
def _cuda_rng(p: Params) -> str:
    return "Draw on the device with torch's CUDA generator: graphs register it and advance it on every replay (scale/shift it for other distributions)."


def join_call(side: str) -> str:
    """The line that makes the capture stream wait for the side stream ``side``."""
    return f"torch.cuda.current_stream().wait_stream({side})"


@sentence(FixCode.JOIN_AFTER_BLOCK)
def _join_after_block(p: Params) -> str:
    side = p["side"]
    return (
        f"Add `{join_call(side)}` after line {p['line']} (the end of `with torch.cuda.stream({side}):`), "
        "at the `with`'s indentation: the capture stream waits for the side work."
    )


@sentence(FixCode.JOIN_BEFORE_RETURN)
def _join_before_return(p: Params) -> str:
    side = p["side"]
    return f"Add `{join_call(side)}` after the last work on `{side}`, before the step returns."


@sentence(FixCode.RACE_JOIN_FIRST)
def _race_join_first(p: Params) -> str:
    return (
        f"The wait on `{p['side']}` (line {p['join_line']}) comes after the read at line {p['line']}: move it before that "
        "line, so the read is ordered after the side stream's write in eager runs and in the captured graph."
    )


@sentence(FixCode.RACE_WAIT)
def _race_wait(p: Params) -> str:
    return (
        f"Make the current stream wait for `{p['side']}` before line {p['line']}: the side stream's access at line "
        f"{p['earlier_line']} is then ordered before it in eager runs and in the captured graph (an edge)."
    )


# --- a training step's capture failures ------------------------------------------------------


@sentence(FixCode.DETACH_RETURN)
def _detach_return(p: Params) -> str:
    name = p["name"]
    return (
        f"Return it detached: the caller's `{name}` (line {p['line']}) then holds a plain tensor with the same value, and "
        f"this call's autograd graph is freed when the step returns. Or `del {name}` before the next call."
    )


@sentence(FixCode.DROP_KEPT_GRAPH)
def _drop_kept_graph(p: Params) -> str:
    name = p.get("name")
    if name:
        return (
            f"`del {name}` before the next call of the step, or return `{name}`'s tensor detached from the step "
            "(`return loss.detach()`): no name may hold one call's autograd graph into the next."
        )
    return (
        "Drop every reference to the earlier call's autograd graph before the next call (a returned loss or output "
        "with a grad_fn, a list of them, a hook or wrapper that stores one), or return detached tensors from the step."
    )


_SCHEDULER = (
    " A learning-rate scheduler that changes lr between steps is then a frozen scalar under a graph (keep lr in a "
    "device tensor); launchprof does not check for one here."
)


@sentence(FixCode.CAPTURABLE_OPTIMIZER)
def _capturable_optimizer(p: Params) -> str:
    opt = p.get("optimizer") or "the optimizer"
    where = f"Build {opt} with capturable=True" if p.get("written") else f"Add capturable=True where {opt} is built (launchprof did not find that line)"
    return f"{where}: its step counts then live on the device and capture records its step().{_SCHEDULER}"


def _scaler_option(option: str, p: Params) -> str:
    opt = p.get("optimizer") or "the optimizer"
    if option == "fused-optimizer":
        return (
            f"build {opt} with fused=True, capturable=True: this torch's GradScaler.step then reads nothing on the host "
            "(the fused kernel skips the step on the device when an inf is found), so the whole step, scaler included, "
            "can be captured (read in torch's source, not measured here)"
        )
    if option == "bf16-autocast":
        return (
            "autocast to bfloat16 and drop the GradScaler (`loss.backward()`, `opt.step()`, no scaler.update()): the whole "
            "step can be captured. A suggestion, not verified: bf16 has fp32's range, so it needs no loss scaling, but "
            "fewer mantissa bits than fp16, which changes the numerics: compare the training curves"
        )
    measured = p.get("partial_speedup")
    gain = f"measured x{number(measured, 2)}" if isinstance(measured, (int, float)) else "not measured here"
    return (
        "capture forward and backward only (torch.cuda.make_graphed_callables) and keep scaler.step(...) and "
        f"scaler.update() outside the graph: the numerics stay, the gain is smaller ({gain})"
    )


@sentence(FixCode.GRAD_SCALER_OPTIONS)
def _grad_scaler_options(p: Params) -> str:
    options = [str(o) for o in p.get("options") or []]
    ranked = "; ".join(f"{i}) {_scaler_option(o, p)}" for i, o in enumerate(options, 1))
    written = " The change written here is option 1." if p.get("written") else ""
    return f"GradScaler.step's host read cannot be captured. Options, the largest gain first: {ranked}.{written}"


@sentence(FixCode.OFF_LEGACY_STREAM)
def _off_legacy_stream(p: Params) -> str:
    op = f" ({p['op']})" if p.get("op") else ""
    return (
        f"Queue this work{op} on the current stream, which the capture follows: no torch.cuda.default_stream() or "
        "stream 0 inside the step; a library or extension that launches on the legacy default stream needs its "
        "per-thread or explicit-stream mode."
    )
