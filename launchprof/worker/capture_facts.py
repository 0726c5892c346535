"""A failed capture as facts: the exception chain, its frames, torch's warnings, the caller's
held autograd graphs and the optimizer it ran into; classified by launchprof.common.capture_causes.

Everything is read from the exception and the live frames at the failure, outside every
timed region; the event carries it, so the analysis can name the cause again later.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import traceback
import warnings
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

import torch

from launchprof.common.capture_causes import ACCUMULATE_GRAD, Facts, capture_only, classify
from launchprof.events.capture_events import OptimizerSeen
from launchprof.events.record import Site
from launchprof.worker.frames import is_internal, traceback_site
from launchprof.worker.held_graphs import held_graphs
from launchprof.worker.outputs_holders import Holder, keep_line, scopes_of
from launchprof.worker.outputs_watch import caller_frame, user_frames

_CUDA_ERROR = re.compile(r"(cudaError\w+|CUDA error: [^\n]+)")
_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # launchprof's package
MAX_FRAMES = 40  # the innermost frames kept
MAX_WARNINGS = 20
TEXT = 300  # characters kept of a message


@contextlib.contextmanager
def recorded_warnings(seen: list[str]) -> Iterator[None]:
    """Record the text of every warning shown inside, and show it to the user as it would
    have been shown: the script's filters decide, as without launchprof. Only the warnings
    that the capture's own warm-up provokes (``capture_only``) are let through a filter, to
    be recorded, and never shown: the script alone would not raise them."""
    show = warnings.showwarning

    def observe(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        text = str(message)
        seen.append(text)
        if not capture_only(text):
            show(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.filterwarnings("always", message=".*" + re.escape(ACCUMULATE_GRAD))
        warnings.showwarning = observe
        yield


def chain_of(exc: BaseException) -> list[BaseException]:
    """The exception and those behind it, outermost first."""
    chain: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and all(e is not x for x in chain):
        chain.append(e)
        e = e.__context__ or e.__cause__
    return chain


def first_line(text: str) -> str:
    return text.strip().splitlines()[0][:TEXT] if text.strip() else ""


def frames_of(exc: BaseException) -> list[Site]:
    """The exception's frames, outermost first; launchprof's own left out."""
    out = []
    for f in traceback.extract_tb(exc.__traceback__):
        file = os.path.realpath(f.filename) if f.filename and not f.filename.startswith("<") else f.filename
        if file and file.startswith(_OWN):
            continue
        out.append(Site(file=file, line=f.lineno, function=f.name, code=(f.line or "").strip()[:TEXT]))
    return out[-MAX_FRAMES:]


def _live_frames(tb: TracebackType | None) -> list[FrameType]:
    out = []
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out


def _optimizer_in(frames: list[FrameType]) -> torch.optim.Optimizer | None:
    """The optimizer whose step the failure went through (its capture check, or GradScaler's step)."""
    for frame in reversed(frames):
        for key in ("self", "optimizer"):
            value = frame.f_locals.get(key)
            if isinstance(value, torch.optim.Optimizer):
                return value
    return None


def _fused_skips_scaler_read(cls: type) -> bool:
    """This torch's GradScaler.step hands the inf check to an optimizer that does the scaling
    itself (``_step_supports_amp_scaling``, which ``cls`` sets when built with fused=True):
    then it reads no ``found_inf`` on the host. Read from torch's source, so a torch whose
    GradScaler or optimizer differs is not claimed."""
    try:
        from torch.amp.grad_scaler import GradScaler

        scaler = "_step_supports_amp_scaling" in inspect.getsource(GradScaler.step)
        inits = [k for k in cls.__mro__ if "__init__" in vars(k) and k is not object]
        sets = any("_step_supports_amp_scaling" in inspect.getsource(k.__init__) for k in inits)
        return scaler and sets and "fused" in inspect.signature(cls.__init__).parameters
    except (OSError, TypeError, ImportError):
        return False


def _built_at(opt: Any, frames: list[FrameType]) -> tuple[str | None, dict[str, Any]]:
    """The user's name for ``opt`` and the line that builds it (a call of its class); the first
    name found and no line when no name is bound by such a call."""
    classes = {k.__name__ for k in type(opt).__mro__}
    first: str | None = None
    for scope in scopes_of(frames):
        for name, value in list(scope.names.items()):
            if value is not opt or name.startswith("__"):
                continue
            where = keep_line(Holder(name, "variable", scope.label, scope.file, scope.first, scope.last), None)
            if any(f"{c}(" in str(where.get("code")) for c in classes):
                return name, where
            first = first or name
    return first, {}


def optimizer_seen(frames: list[FrameType], user: list[FrameType]) -> OptimizerSeen | None:
    opt = _optimizer_in(frames)
    if opt is None:
        return None
    groups = opt.param_groups
    variable, where = _built_at(opt, user)
    return OptimizerSeen(
        name=type(opt).__name__,
        variable=variable,
        capturable=all(bool(g.get("capturable")) for g in groups),
        fused=any(bool(g.get("fused")) for g in groups),
        accepts_fused="fused" in inspect.signature(type(opt).__init__).parameters,
        scaler_skips_read_when_fused=_fused_skips_scaler_read(type(opt)),
        **where,
    )


def _quietly(read: Callable[[], Any], otherwise: Any) -> Any:
    """What ``read`` finds in the user's objects, or ``otherwise`` when it fails on them: the
    cause is still classified from the chain."""
    try:
        return read()
    except Exception:
        return otherwise


def failure_info(exc: BaseException, warnings: list[str]) -> dict[str, Any]:
    """The ``capture`` event's fields of a failure (launchprof.events.capture_events.CaptureEvent)."""
    chain = chain_of(exc)
    first = chain[-1]
    texts = [f"{type(x).__name__}: {x}" for x in reversed(chain)]
    cuda_errors = sorted({m.group(1) for m in _CUDA_ERROR.finditer("\n".join(texts))})
    site = next((s for s in (traceback_site(x.__traceback__) for x in reversed(chain)) if s is not None), None)
    frames = frames_of(first)
    caller = caller_frame()
    outer = user_frames(caller)
    held = _quietly(lambda: held_graphs(outer, caller.f_lineno if caller is not None else None), [])
    live = _live_frames(first.__traceback__)
    inner_user = [f for f in reversed(live) if not is_internal(f.f_code.co_filename)]
    shown = list(dict.fromkeys(first_line(w) for w in warnings))[:MAX_WARNINGS]
    chain_lines = [t.splitlines()[0][:TEXT] for t in texts]
    facts = Facts(
        texts=tuple(chain_lines), cuda_errors=tuple(cuda_errors), warnings=tuple(shown), frames=tuple(frames),
        site=site, held_graphs=len(held),
    )
    rule = classify(facts)
    return {
        "kind": rule.kind,
        "evidence": rule.evidence,
        "exception": type(first).__name__,
        "message": first_line(str(first)) or type(first).__name__,
        "chain": chain_lines,
        "cuda_errors": cuda_errors,
        "warnings": shown,
        "frames": frames,
        "held_graphs": held,
        "optimizer": _quietly(lambda: optimizer_seen(live, inner_user + outer), None),
        **(site.as_dict() if site else {}),
    }
