"""The sentence of each hazard code the static rules (launchprof.lint.lint_rules) write, and the
hint some of them add after their kind's, both from the finding's params."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from launchprof.model.hazard_codes import HazardCode, SyncReason

Params = Mapping[str, Any]
Write = Callable[[Params], str]
LINT: dict[str, Write] = {}
LINT_HINTS: dict[str, Write] = {}

_WAITS = "copies a device value to the host and waits for the GPU"
_FORMATS = f"formats a tensor as text: it {_WAITS}"
_REASONS: dict[str, str] = {
    SyncReason.WAITS: _WAITS,
    SyncReason.TO_HOST: "copies the tensor to the host and waits for the GPU",
    SyncReason.HOST_RESULT: "has a data-dependent result on the host: it waits for the GPU",
    SyncReason.SYNCHRONIZE: "waits for the GPU, which a capturing stream cannot do",
    SyncReason.QUERY: "queries a stream or event, which is invalid while capturing",
    SyncReason.LOGS_TENSOR: f"formats a tensor for the log: {_WAITS}",
    SyncReason.FORMATS_TENSOR: _FORMATS,
    SyncReason.PRINTS_TENSOR: f"formats a tensor on the host: it {_WAITS}",
    SyncReason.SIZE_ON_HOST: "needs its result (a size or a Python bool) on the host: it waits for the GPU",
}


def _says(code: HazardCode, hint: Write | None = None) -> Callable[[Write], Write]:
    def register(write: Write) -> Write:
        LINT[code.value] = write
        if hint is not None:
            LINT_HINTS[code.value] = hint
        return write

    return register


def sync_reason(p: Params) -> str:
    """Why a call waits for the GPU, as ``lint-sync-call`` says it."""
    if p["reason"] == SyncReason.CONVERTS:
        return f"converts a tensor to a Python {p['to']}: it {_WAITS}"
    return _REASONS[p["reason"]]


@_says(HazardCode.LINT_SYNC_CALL)
def _sync_call(p: Params) -> str:
    return f"`{p['call']}` {sync_reason(p)}"


@_says(HazardCode.LINT_SYNC_CONDITION)
def _sync_condition(p: Params) -> str:
    branch = "; the branch is also data-dependent (the graph keeps the one taken at capture)" if p.get("branch") else ""
    return f"`{p['construct']}` on the tensor value `{p['expr']}` {_WAITS}{branch}"


@_says(HazardCode.LINT_SYNC_FORMAT)
def _sync_format(p: Params) -> str:
    return f"`{p['expr']}` {_FORMATS}"


@_says(HazardCode.LINT_SYNC_MASK, lambda p: "Use torch.where(mask, x, 0) or masked_fill to keep the shape fixed.")
def _sync_mask(p: Params) -> str:
    return f"boolean-mask indexing `{p['expr']}` has a data-dependent size: it runs nonzero and waits for the GPU"


@_says(HazardCode.LINT_PAGEABLE_HOST_TENSOR)
def _pageable_host_tensor(p: Params) -> str:
    return f"`{p['call']}` copies a tensor built on the host ({p['origin']}) from pageable memory to the device"


@_says(HazardCode.LINT_PAGEABLE_COPY_FROM_HOST)
def _pageable_copy_from_host(p: Params) -> str:
    return f"`{p['call']}` copies from a host tensor ({p['origin']}) in pageable memory"


@_says(HazardCode.LINT_PAGEABLE_NEW_TENSOR)
def _pageable_new_tensor(p: Params) -> str:
    return f"`{p['call']}` builds a device tensor from host data: a copy from pageable memory"


@_says(HazardCode.LINT_PAGEABLE_FROM_DATA)
def _pageable_from_data(p: Params) -> str:
    return f"`{p['call']}` copies host data from pageable memory to the device"


def _counter_hint(p: Params) -> str:
    return (
        f"Here: keep `{p['name']}` in a device tensor (torch.zeros((), device='cuda')) and count it with add_(1) "
        "inside the step, so that every replay advances it."
    )


@_says(HazardCode.LINT_FROZEN_COUNTER, _counter_hint)
def _frozen_counter(p: Params) -> str:
    return (
        f"Python counter `{p['name']}` (it changes on every call) is passed to a tensor operation in "
        f"`{p['call']}`: the graph keeps the value it had at capture"
    )


@_says(HazardCode.LINT_FROZEN_NUMBER, lambda p: f"Here: pass `{p['name']}` as a device tensor and update it with fill_()/copy_().")
def _frozen_number(p: Params) -> str:
    return (
        f"Python number `{p['name']}` (an argument of `{p['target']}`) is passed to a tensor operation in "
        f"`{p['call']}`: the graph keeps the value it had at capture"
    )


def _capturable_hint(p: Params) -> str:
    key = p["key"]
    return (
        f"Here: make `{key}` a tensor (e.g. torch.tensor({key}, device='cuda')) and create the optimizer with "
        "capturable=True where it supports it (Adam, AdamW, SGD ...); update it with fill_() outside the graph."
    )


@_says(HazardCode.LINT_FROZEN_OPTIMIZER_SETTING, _capturable_hint)
def _frozen_setting(p: Params) -> str:
    what = f"Python number `{p['name']}`" if p.get("number") else "a Python value"
    return (
        f"{what} is written into the optimizer's param_groups (`{p['call']}`): a captured optimizer step keeps "
        "the value it had at capture"
    )


def _branch_hint(p: Params) -> str:
    return "Here: compute both branches and select with torch.where on a device tensor, or capture one graph per value."


@_says(HazardCode.LINT_FROZEN_BRANCH, _branch_hint)
def _frozen_branch(p: Params) -> str:
    return (
        f"Python number `{p['name']}` (an argument of `{p['target']}`) decides the host branch "
        f"`{p['construct']} {p['expr']}`: the graph keeps the branch taken at capture"
    )


def _per_value_hint(p: Params) -> str:
    return "Here: capture one graph per value (or per loop count) and pick it on the host outside the step."


@_says(HazardCode.LINT_ARGUMENT_DECIDES, _per_value_hint)
def _argument_decides(p: Params) -> str:
    expr = p["expr"]
    shape = f"the loop bound `{expr}`" if p["construct"] == "for" else f"the host branch `{p['construct']} {expr}`"
    return (
        f"`{p['name']}` (an argument of `{p['target']}`) decides {shape}: calls with other values run "
        "other kernels, but the graph replays the ones recorded at capture"
    )


@_says(HazardCode.LINT_STREAM_NOT_JOINED, lambda p: f"Here: after the side work, call torch.cuda.current_stream().wait_stream({p['stream']}).")
def _stream_not_joined(p: Params) -> str:
    key = p["stream"]
    where = ", ".join(f"lines {a}-{b}" for a, b in zip(p["block_starts"], p["block_ends"], strict=True))
    side = f"the side work (`with torch.cuda.stream({key})`, {where})" if where else "the work queued on it"
    return (
        f"stream `{key}` is forked from the current stream here, and {side} never rejoins it: "
        "capture ends with cudaErrorStreamCaptureUnjoined"
    )


@_says(HazardCode.LINT_HOST_RNG)
def _host_rng(p: Params) -> str:
    source = "numpy's" if p["source"] == "numpy" else "Python's"
    return f"`{p['call']}` draws from {source} random generator on the host: replay repeats the captured numbers"


@_says(HazardCode.LINT_NEW_GENERATOR)
def _new_generator(p: Params) -> str:
    return f"`{p['call']}` creates a generator the graph does not know"


@_says(HazardCode.LINT_PASSED_GENERATOR)
def _passed_generator(p: Params) -> str:
    return f"`{p['call']}` draws from a generator passed in (`generator=`), not torch's default one"


@_says(HazardCode.LINT_CALL_NOT_FOLLOWED)
def _not_followed(p: Params) -> str:
    return f"`{p['call']}` is not followed: {p['why']}; a hazard behind it would be missed"
