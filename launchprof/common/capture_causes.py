"""Why a capture failed, read from what torch and CUDA said: a small table of rules.

A failed capture leaves an exception chain (the first exception is the cause: the graph's
context manager raises ``cudaErrorStreamCaptureInvalidated`` on exit and hides it), the
CUDA error names and texts in it, the frames the first exception passed through, the
warnings torch raised during the warm-up and the capture, and the names in the caller's
code that hold an autograd graph. Each rule of :data:`RULES` names one cause by that
evidence alone; the first that holds gives the kind. Nothing matches: ``capture-failed``,
with torch's message and the line where it surfaced, never a guessed kind.

The worker classifies with what it has; the analysis classifies again with the probe
call's sync lines added (a failure at a line where the probe saw a sync is a hidden sync).
Pure and torch-free: both sides share it and the CPU tests drive it with built chains.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from launchprof.events.capture_events import CaptureEvent
from launchprof.events.observation_events import ProbeEvent
from launchprof.events.record import Site

# CUDA's stream-capture errors: name -> (number, the text cudaGetErrorString gives).
CAPTURE_ERRORS: dict[str, tuple[int, str]] = {
    "cudaErrorStreamCaptureUnsupported": (900, "operation not permitted when stream is capturing"),
    "cudaErrorStreamCaptureInvalidated": (901, "operation failed due to a previous error during capture"),
    "cudaErrorStreamCaptureMerge": (902, "operation would result in a merge of separate capture sequences"),
    "cudaErrorStreamCaptureUnmatched": (903, "capture was not ended in the same stream as it began"),
    "cudaErrorStreamCaptureUnjoined": (904, "capturing stream has unjoined work"),
    "cudaErrorStreamCaptureIsolation": (905, "dependency created on uncaptured work in another stream"),
    "cudaErrorStreamCaptureImplicit": (906, "operation would make the legacy stream depend on a capturing blocking stream"),
    "cudaErrorCapturedEvent": (907, "operation not permitted on an event last recorded in a capturing stream"),
    "cudaErrorStreamCaptureWrongThread": (908, "attempt to terminate a thread-local capture sequence from another thread"),
    "cudaErrorMemoryAllocation": (2, "out of memory"),
}
UNSUPPORTED, INVALIDATED, UNJOINED, ISOLATION, IMPLICIT, OUT_OF_MEMORY = 900, 901, 904, 905, 906, 2

# torch's own words for the causes it names (lower case, as matched).
STALE_STREAM = "stale reference to the default stream"  # a kept graph, raised at capture (torch 2.13; 2.11 says 906)
ACCUMULATE_GRAD = "accumulategrad node's stream does not match"  # a kept graph, warned at warm-up (torch 2.11 on)
NOT_CAPTURABLE = "param_groups' capturable is false"  # torch.optim.Optimizer's capture health check
NOT_PINNED = ("pinned", "pageable")
GRAD_SCALER_FILE = "torch/amp/grad_scaler.py"
# Warnings that only the capture's own warm-up on a side stream provokes: recorded as
# evidence, never shown to the user (the script alone would not raise them).
CAPTURE_ONLY_WARNINGS = (ACCUMULATE_GRAD,)

# Host reads: a call on the failing line that waits for the GPU.
HOST_READ_METHODS = frozenset({"item", "tolist", "cpu", "numpy", "synchronize", "nonzero", "query"})
HOST_READ_CALLS = frozenset({"float", "int", "bool", "print"})
# torch functions whose frame, innermost at the failure, is a sync: (file ending, function).
SYNC_FRAMES = (
    ("torch/cuda/__init__.py", "synchronize"),
    ("torch/cuda/streams.py", "synchronize"),
    ("torch/cuda/streams.py", "query"),
    ("torch/_tensor_str.py", ""),
    ("torch/_tensor.py", "tolist"),
    ("torch/_tensor.py", "__format__"),
)


@dataclass(frozen=True)
class Facts:
    """What a failed capture said, as the event keeps it."""

    texts: tuple[str, ...] = ()  # the chain's "Type: message" lines, the first exception first
    cuda_errors: tuple[str, ...] = ()  # names and "CUDA error: ..." texts
    warnings: tuple[str, ...] = ()
    frames: tuple[Site, ...] = ()  # the first exception's frames, outermost first
    site: Site | None = None  # the user's line where it surfaced
    held_graphs: int = 0  # caller names that hold a tensor with a grad_fn
    cause: str | None = None  # too little memory, found before capture
    probe_syncs: frozenset[tuple[str | None, int | None]] = field(default_factory=frozenset)
    stream_zero: bool = False  # the probe call saw the step enter stream 0, the legacy default stream

    @property
    def lower(self) -> str:
        return "\n".join(self.texts + self.cuda_errors).lower()

    @property
    def errors(self) -> frozenset[int]:
        """The CUDA errors named anywhere in the chain, by number (by name or by CUDA's text)."""
        return _named_errors(self.lower)

    @property
    def first_errors(self) -> frozenset[int]:
        """The CUDA errors the first exception names: what failed, not the ``Invalidated``
        the capture's end raises after it. A chain without texts: all of them."""
        return _named_errors(self.texts[0].lower()) if self.texts else self.errors

    def warned(self, words: str) -> bool:
        return any(words in w.lower() for w in self.warnings)

    def through(self, file_end: str) -> bool:
        return any(_norm(f.file).endswith(file_end) for f in self.frames)


@dataclass(frozen=True)
class Rule:
    kind: str
    evidence: str  # which evidence named it (CaptureEvent.evidence)
    holds: Callable[[Facts], bool]


def _named_errors(text: str) -> frozenset[int]:
    return frozenset(n for name, (n, words) in CAPTURE_ERRORS.items() if name.lower() in text or words in text)


def _norm(file: str | None) -> str:
    return (file or "").replace("\\", "/")


def host_read_on(code: str | None) -> bool:
    """The line calls something that reads a device value on the host (``.item()``,
    ``float(t)``, ``torch.cuda.synchronize()``, ``print``)."""
    try:
        tree = ast.parse((code or "").strip() + ("" if not (code or "").rstrip().endswith(":") else " pass"))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in HOST_READ_METHODS:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in HOST_READ_CALLS and node.args and not isinstance(node.args[0], ast.Constant):
            return True
    return False


def sync_evidence(f: Facts) -> bool:
    """The failure is a host read: the innermost frame is torch's sync function, the failing
    line reads a device value, or the probe call saw a sync at the user's line."""
    if f.frames:
        inner = f.frames[-1]
        file = _norm(inner.file)
        if any(file.endswith(end) and (not fn or inner.function == fn) for end, fn in SYNC_FRAMES) or host_read_on(inner.code):
            return True
    if f.site is not None and (host_read_on(f.site.code) or (f.site.file, f.site.line) in f.probe_syncs):
        return True
    return False


def _kept_graph(f: Facts) -> bool:
    return bool({ISOLATION, IMPLICIT} & f.first_errors) and (f.held_graphs > 0 or f.warned(ACCUMULATE_GRAD))


def _warned_kept_graph(f: Facts) -> bool:
    return f.warned(ACCUMULATE_GRAD) and bool({INVALIDATED, ISOLATION, IMPLICIT} & f.first_errors) and not sync_evidence(f)


def _grad_scaler(f: Facts) -> bool:
    """GradScaler's own host read: the failure passes through grad_scaler.py and ends there
    (``found_inf`` read with ``.item()``), or at a host read below it."""
    inner = _norm(f.frames[-1].file) if f.frames else ""
    return f.through(GRAD_SCALER_FILE) and (inner.endswith(GRAD_SCALER_FILE) or sync_evidence(f))


# Most specific first; the first rule that holds names the kind.
RULES: tuple[Rule, ...] = (
    Rule("capture-allocation", "free-memory", lambda f: f.cause is not None),
    Rule("capture-allocation", "out-of-memory", lambda f: OUT_OF_MEMORY in f.errors),
    Rule("optimizer-not-capturable", "capturable-false", lambda f: NOT_CAPTURABLE in f.lower),
    Rule("grad-scaler", "grad-scaler-read", _grad_scaler),
    Rule("kept-autograd-graph", "stale-stream", lambda f: STALE_STREAM in f.lower),
    Rule("kept-autograd-graph", "implicit-with-held-graph", _kept_graph),
    Rule("kept-autograd-graph", "accumulate-grad-warning", _warned_kept_graph),
    Rule("unjoined-stream", "unjoined", lambda f: UNJOINED in f.errors or "unjoined" in f.lower),
    Rule("pageable-copy", "not-pinned", lambda f: any(w in f.lower for w in NOT_PINNED)),
    Rule("legacy-stream", "implicit", lambda f: IMPLICIT in f.first_errors),
    Rule("legacy-stream", "stream-zero", lambda f: UNSUPPORTED in f.first_errors and f.stream_zero and not sync_evidence(f)),
    Rule("hidden-sync", "host-read", lambda f: bool({UNSUPPORTED, INVALIDATED} & f.first_errors) and sync_evidence(f)),
)
OTHER = Rule("capture-failed", "none", lambda f: True)


def classify(f: Facts) -> Rule:
    """The first rule of :data:`RULES` that holds, else :data:`OTHER`."""
    return next((r for r in RULES if r.holds(f)), OTHER)


def capture_only(warning: str) -> bool:
    """A warning that the capture's own warm-up provokes, not the user's script."""
    return any(words in warning.lower() for words in CAPTURE_ONLY_WARNINGS)


_INSTANCE = re.compile(r"for an instance of (\w+)")


def optimizer_named(texts: tuple[str, ...] | list[str]) -> str | None:
    """The optimizer class the capture health check names."""
    for text in texts:
        m = _INSTANCE.search(text)
        if m:
            return m.group(1)
    return None


def facts_of(cap: CaptureEvent, probe: ProbeEvent | None = None) -> Facts | None:
    """A failed capture's facts as its event keeps them, with the probe call's sync lines;
    None for a run recorded before the event kept them (its ``kind`` stands as written)."""
    if cap.frames is None:
        return None
    syncs = [s for s in (probe.syncs if probe is not None else []) if (s.kind or "hidden-sync") == "hidden-sync"]
    return Facts(
        texts=tuple(cap.chain), cuda_errors=tuple(cap.cuda_errors), warnings=tuple(cap.warnings or ()), frames=tuple(cap.frames),
        site=Site(file=cap.file, line=cap.line, code=cap.code, function=cap.function) if cap.file else None,
        held_graphs=len(cap.held_graphs or []), cause=cap.cause, probe_syncs=frozenset((s.file, s.line) for s in syncs),
        stream_zero=bool(stream_zero_uses(probe)),
    )


def stream_zero_uses(probe: ProbeEvent | None) -> list[Site]:
    """Where the probe call saw the step enter stream 0 (``torch.cuda.stream(s)`` with
    ``s.cuda_stream == 0``: the legacy default stream, ``torch.cuda.default_stream()`` or
    ``ExternalStream(0)``)."""
    return [s for s in (probe.streams if probe is not None else []) if s.op == "use_stream" and s.stream == 0]


def cause_of(cap: CaptureEvent, probe: ProbeEvent | None = None) -> tuple[str, str | None]:
    """(kind, evidence) of a failed capture: classified again from its facts, the probe's
    syncs included; a run recorded before the facts were kept keeps its recorded kind."""
    facts = facts_of(cap, probe)
    if facts is None:
        return cap.kind or OTHER.kind, cap.evidence
    rule = classify(facts)
    return rule.kind, rule.evidence
