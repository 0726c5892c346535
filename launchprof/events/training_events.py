"""Events of a training step that did not capture whole: the kept autograd graph launchprof
released so that capture could be tried again, and the largest part of the step that was
captured on its own (``torch.cuda.make_graphed_callables``) and timed inside the step."""

from __future__ import annotations

from dataclasses import dataclass, field

from launchprof.events.capture_events import CaptureEvent
from launchprof.events.record import Event, Site, omitted


@dataclass(frozen=True, kw_only=True)
class ReleasedTensor:
    """An output of an earlier call, still alive with its autograd graph, that launchprof
    detached in place (its values stay; its ``grad_fn`` goes)."""

    name: str | None = None  # the user's name that keeps it (`loss`, `history`), None when none could be named
    holder_kind: str | None = None  # variable, list, dict, attribute ...
    scope: str | None = None  # the function (`main()`) or module (`__main__`) the name lives in
    where: Site | None = None  # the line that stores it (`loss = step(x, y)`)
    grad_fn: str | None = None  # the graph's last node (`NllLossBackward0`)
    bytes: int | None = None
    released: bool = False
    error: str | None = omitted()  # why ``detach_`` refused (a view)


@dataclass(frozen=True, kw_only=True)
class KeptGraphEvent(Event):
    """Capture failed on an autograd graph an earlier call left alive; launchprof detached
    the outputs that hold it, for the measurement only, and captured again."""

    TYPE = "kept-graph"
    index: int
    failure: CaptureEvent  # the failed capture this answers (the later ``capture`` event is the retry's)
    tensors: list[ReleasedTensor] = field(default_factory=list)
    call_site: Site | None = None  # the user's line that calls the target
    retried: bool = False
    captured: bool = False  # the retry captured: the figures that follow assume the fix
    retry_kind: str | None = omitted()  # the retry's failure kind when it failed too
    error: str | None = omitted()  # launchprof's own failure while releasing


@dataclass(frozen=True, kw_only=True)
class SampleArgRow:
    """One positional argument of the module call, as the sample for its capture."""

    expr: str | None = None  # its expression at the user's line (`x`)
    shape: list[int] = field(default_factory=list)
    dtype: str = ""
    requires_grad: bool = False


@dataclass(frozen=True, kw_only=True)
class ModuleCandidate:
    """A module the step calls directly, in the order tried (most parameters first)."""

    module: str  # its expression at the user's line (`model`, `self.net`), else its class name
    module_type: str
    parameters: int
    site: Site | None = None  # the user's line that calls it
    reason: str | None = None  # a PartialSkip value when it was not measured; None for the one measured
    error: str | None = omitted()


@dataclass(frozen=True, kw_only=True)
class PartialCaptureEvent(Event):
    """The step timed eagerly and with its largest module's forward and backward graphed
    (``make_graphed_callables``), interleaved, on the user's state, restored after."""

    TYPE = "partial-capture"
    index: int
    status: str  # "measured" or "not-measured"
    reason: str | None = omitted()  # a PartialSkip value when nothing was measured
    error: str | None = omitted()
    module: str | None = omitted()
    module_type: str | None = omitted()
    parameters: int | None = omitted()
    site: Site | None = omitted()
    args: list[SampleArgRow] = field(default_factory=list)
    autocast: str | None = omitted()  # the dtype the module call ran under autocast
    grad_enabled: bool = True
    setup_us: float | None = omitted()  # make_graphed_callables: warm-up, both captures
    eager_us: list[float] = field(default_factory=list)  # the whole step, eager (wall, one sample per call)
    graphed_us: list[float] = field(default_factory=list)  # the whole step with the module graphed
    eager_gpu_us: list[float] = field(default_factory=list)
    graphed_gpu_us: list[float] = field(default_factory=list)
    match: bool | None = omitted()  # the step's outputs, eager against graphed, from one state
    max_abs_diff: float | None = omitted()
    candidates: list[ModuleCandidate] = field(default_factory=list)
