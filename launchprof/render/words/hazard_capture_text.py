"""The sentences of the capture failures whose cause torch and CUDA named
(launchprof.common.capture_causes): a training step's kept autograd graph, its optimizer,
its GradScaler, and work on the legacy default stream."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from launchprof.model.hazard_codes import HazardCode

Params = Mapping[str, Any]
Write = Callable[[Params], str]
CAPTURE: dict[str, Write] = {}

# What each piece of evidence (CaptureEvent.evidence) showed, for the kept graph's sentence.
EVIDENCE = {
    "stale-stream": "torch: an autograd node has a stale reference to the default stream",
    "accumulate-grad-warning": "torch warned that the AccumulateGrad node's stream does not match",
}
_HOLDERS = {"variable": "a variable in", "attribute": "an attribute of"}


def _says(code: HazardCode) -> Callable[[Write], Write]:
    def register(write: Write) -> Write:
        CAPTURE[code.value] = write
        return write

    return register


def _errors(p: Params) -> str:
    names = [str(e) for e in p.get("cuda_errors") or [] if str(e).startswith("cudaError") and "Invalidated" not in str(e)]
    return ", ".join(names)


def _failed_at(p: Params) -> str:
    code, line = p.get("failed_code"), p.get("failed_line")
    if not code:
        return "capture failed"
    return f"capture failed at `{code}`{f' (line {line})' if line else ''}"


def holder_words(p: Params) -> str:
    """`loss` (a variable in `main()`)."""
    kind, scope = p.get("holder_kind") or "variable", p.get("scope")
    where = _HOLDERS.get(kind, f"a {kind} in")
    return f"`{p['name']}`" + (f" ({where} `{scope}`)" if scope else "")


@_says(HazardCode.KEPT_AUTOGRAD_GRAPH)
def _kept_graph(p: Params) -> str:
    said = EVIDENCE.get(str(p.get("evidence"))) or _errors(p)
    why = f" ({said})" if said else ""
    reason = "where backward meets the AccumulateGrad nodes of that graph, still tied to the default stream the earlier call ran on"
    if p.get("name"):
        grad_fn = f" (its grad_fn is {p['grad_fn']})" if p.get("grad_fn") else ""
        others = [str(n) for n in p.get("names") or [] if n != p["name"]]
        also = f"; {', '.join(f'`{n}`' for n in others)} hold{'s' if len(others) == 1 else ''} one too" if others else ""
        return f"{holder_words(p)} keeps an earlier call's autograd graph alive{grad_fn}{also}: {_failed_at(p)}, {reason}{why}"
    return f"an earlier call's autograd graph is still alive (held where launchprof cannot name it): {_failed_at(p)}, {reason}{why}"


@_says(HazardCode.OPTIMIZER_NOT_CAPTURABLE)
def _optimizer(p: Params) -> str:
    opt = p.get("optimizer") or "the optimizer"
    name = f"`{p['variable']}` ({opt})" if p.get("variable") else str(opt)
    return f"{name} is built without capturable=True, so its step() cannot be captured: {_failed_at(p)}"


@_says(HazardCode.GRAD_SCALER)
def _grad_scaler(p: Params) -> str:
    file, line, fn = p.get("library_file"), p.get("library_line"), p.get("library_function")
    where = f" ({file}{':' + str(line) if line else ''}{f', `{fn}`' if fn else ''})" if file else ""
    return (
        f"`{p['code']}` runs GradScaler.step, which reads its inf check (found_inf) on the host to decide whether to step"
        f"{where}: capture cannot wait for the GPU"
    )


@_says(HazardCode.LEGACY_STREAM)
def _legacy_stream(p: Params) -> str:
    op = f" (in `{p['op']}`)" if p.get("op") else ""
    what = f"`{p['code']}`" if p.get("code") else "the step"
    if p.get("evidence") == "stream-zero":
        entered = f"`{p['stream_code']}` (line {p['stream_line']})" if p.get("stream_code") else "the step"
        return (
            f"{what} queues work on the legacy default stream, which {entered} makes current: capture cannot record "
            "work on it (cudaErrorStreamCaptureUnsupported)"
        )
    return (
        f"{what} queues work on the legacy default stream{op}, which cannot be made to wait on a capturing stream: "
        "capture failed (cudaErrorStreamCaptureImplicit)"
    )
