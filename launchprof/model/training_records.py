"""The report's training-step sections: the fixes the figures assume (``assumes_fix``) and
the largest part of a step that does not capture whole, captured alone (``partial_capture``).

``assumes_fix`` lists what launchprof changed in the user's process, for the measurement
only, so that the step could be captured, and which report fields were measured after it:
every renderer labels those figures "once fixed". ``partial_capture`` is the figure a
training step whose whole capture fails can still get: its largest module's forward and
backward through ``torch.cuda.make_graphed_callables``, the rest of the step eager; a fix
that says "graph forward and backward only" reads its ``speedup``.
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum

from launchprof.model.records import model
from launchprof.model.step_timing import Speedup, Stats

# The hazard kind a released autograd graph answers (the capture failure's kind).
KEPT_GRAPH_KIND = "kept-autograd-graph"
STATUS_MEASURED = "measured"
STATUS_NOT_MEASURED = "not-measured"


class AssumedFixCode(StrEnum):
    """What launchprof did in the user's process. Codes are a contract: add, never rename."""

    DETACHED = "detached-kept-outputs"  # detach_() on earlier calls' outputs the caller kept


class PartialSkip(StrEnum):
    """Why a module (or the whole partial capture) was not measured. Add, never rename."""

    NO_MODULE = "no-module"  # the step calls no torch.nn.Module with parameters directly
    DISTRIBUTED = "distributed"  # several ranks: extra calls would have to be made on all of them
    KEYWORD_ARGUMENTS = "keyword-arguments"  # the graphed callable takes positional tensors only
    NON_TENSOR_ARGUMENTS = "non-tensor-arguments"
    CALLED_TWICE = "called-twice"  # one graph's static outputs cannot serve two calls per step
    HOOKS = "hooks"  # make_graphed_callables refuses modules with hooks
    NOT_CUDA = "not-cuda"  # parameters or arguments off the GPU
    GRAPHING_FAILED = "graphing-failed"  # make_graphed_callables raised
    STEP_FAILED = "step-failed"  # the step raised with the module graphed
    RECORDING_FAILED = "recording-failed"  # the call that finds the modules raised
    TIMING_FAILED = "timing-failed"
    NOT_TRIED = "not-tried"  # a larger module was measured first


@model
class KeptVariable:
    """An output of an earlier call the caller kept with its autograd graph."""

    name: str | None  # `loss`; None when no name of the user's holds it
    holder_kind: str | None = None
    file: str | None = None  # the line that stores it
    line: int | None = None
    code: str | None = None
    grad_fn: str | None = None


@model
class AssumedFix:
    """One change launchprof made for the measurement, that the user's code has to make."""

    kind: str  # the hazard kind it answers (`kept-autograd-graph`)
    code: str  # an AssumedFixCode value: what was done
    variables: list[KeptVariable] = dataclasses.field(default_factory=list)
    # Report fields measured after the change: their figures read "once fixed".
    figures: list[str] = dataclasses.field(default_factory=list)


@model
class SampleArg:
    """A positional argument of the graphed module call: what its sample must be like."""

    expr: str | None  # the argument at the user's line (`x`)
    shape: list[int]
    dtype: str
    requires_grad: bool


@model
class PartialCandidate:
    module: str  # the module's expression at the user's line, else its class name
    module_type: str
    parameters: int
    file: str | None = None
    line: int | None = None
    reason: str | None = None  # a PartialSkip value; None for the one measured
    error: str | None = None


@model
class PartialCapture:
    """The step with its largest module graphed (forward and backward), against eager."""

    status: str  # "measured" or "not-measured"
    reason: str | None = None  # a PartialSkip value when not measured
    error: str | None = None
    module: str | None = None  # `model`, as the user's line names it
    module_type: str | None = None
    parameters: int | None = None
    file: str | None = None  # the user's line that calls the module
    line: int | None = None
    code: str | None = None
    args: list[SampleArg] = dataclasses.field(default_factory=list)
    autocast: str | None = None  # dtype of the autocast the module ran under
    eager_step_us: Stats | None = None  # the whole step, eager
    graphed_step_us: Stats | None = None  # the whole step with the module graphed
    speedup: Speedup | None = None  # eager / graphed step medians, 95% bootstrap interval
    setup_us: float | None = None  # make_graphed_callables: warm-up and both captures
    matches: bool | None = None  # the step's outputs, eager against graphed, from one state
    max_abs_diff: float | None = None
    snippet: str | None = None  # code to paste where the module is built
    candidates: list[PartialCandidate] = dataclasses.field(default_factory=list)
    eager_samples_us: list[float] = dataclasses.field(default_factory=list)
    graphed_samples_us: list[float] = dataclasses.field(default_factory=list)
    timing: str | None = None  # "burst": interleaved, as eager and replay
