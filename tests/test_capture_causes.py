"""Capture failures are classified from what torch and CUDA said (launchprof.common.capture_causes),
never by a default kind.

The table is driven with the facts a failure leaves, and the worker's side
(worker/capture_facts.py) with real exception chains: exceptions raised through frames
compiled at torch's own paths (``torch/amp/grad_scaler.py``, ``torch/optim/optimizer.py``),
wrapped as the plan wraps the user's exceptions and followed by the ``Invalidated`` error
that the graph's context manager raises on exit. Runs on CPU.
"""

from __future__ import annotations

import linecache
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from launchprof.common.capture_causes import CAPTURE_ERRORS, Facts, cause_of, classify, host_read_on
from launchprof.events.capture_events import CaptureEvent
from launchprof.events.observation_events import ProbeEntry, ProbeEvent
from launchprof.events.record import Site
from launchprof.worker.capture_facts import failure_info, recorded_warnings
from launchprof.worker.user_errors import UserError
from tests.recorded import load_evidence, run_names

SITE = "/proj/train.py"
SCALER = "/venv/lib/python3.11/site-packages/torch/amp/grad_scaler.py"
OPTIMIZER = "/venv/lib/python3.11/site-packages/torch/optim/optimizer.py"


def cuda(name: str) -> str:
    """torch's message for a CUDA error: CUDA's text, then the name to search for."""
    number, words = CAPTURE_ERRORS[name]
    return f"CUDA error: {words}\nSearch for `{name}' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"


INVALIDATED = "AcceleratorError: " + cuda("cudaErrorStreamCaptureInvalidated").splitlines()[0]
UNSUPPORTED = "AcceleratorError: " + cuda("cudaErrorStreamCaptureUnsupported").splitlines()[0]
IMPLICIT = "AcceleratorError: " + cuda("cudaErrorStreamCaptureImplicit").splitlines()[0]
STALE = (
    "RuntimeError: During CUDA graph capture, autograd node 'torch::autograd::AccumulateGrad' has a stale reference to the "
    "default stream (stream 0) from warmup."
)
ACCUMULATE = (
    "The AccumulateGrad node's stream does not match the stream of the node that produced the incoming gradient. This may "
    "incur unnecessary synchronization and break CUDA graph capture if the AccumulateGrad node's stream is the default stream."
)


def facts(*texts: str, **kw: Any) -> Facts:
    return Facts(texts=texts, **kw)


def at(file: str, line: int, function: str, code: str) -> Site:
    return Site(file=file, line=line, function=function, code=code)


BACKWARD = at(SITE, 12, "step", "loss.backward()")
ITEM = at(SITE, 9, "step", "scale = h.abs().mean().item()")
MASK = at(SITE, 10, "step", "keep = h[h > 0]")

TABLE = [
    # (what torch and CUDA said, the kind, the evidence)
    (facts(cause="free 1 GiB < peak 3 GiB"), "capture-allocation", "free-memory"),
    (facts("OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", INVALIDATED), "capture-allocation", "out-of-memory"),
    (facts("RuntimeError: Attempting CUDA graph capture of step() for an instance of Adam but param_groups' capturable is False.", INVALIDATED),
     "optimizer-not-capturable", "capturable-false"),
    (facts(UNSUPPORTED, INVALIDATED, frames=(at(SITE, 14, "step", "scaler.step(opt)"), at(SCALER, 454, "step", "retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)"),
     at(SCALER, 371, "_maybe_opt_step", 'if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'), at(SCALER, 371, "<genexpr>", 'if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'))),
     "grad-scaler", "grad-scaler-read"),
    (facts(STALE, INVALIDATED, site=BACKWARD, frames=(BACKWARD,)), "kept-autograd-graph", "stale-stream"),
    (facts(IMPLICIT, INVALIDATED, site=BACKWARD, frames=(BACKWARD,), held_graphs=1), "kept-autograd-graph", "implicit-with-held-graph"),
    (facts(INVALIDATED, site=BACKWARD, frames=(BACKWARD,), warnings=(ACCUMULATE,)), "kept-autograd-graph", "accumulate-grad-warning"),
    (facts("AcceleratorError: CUDA error: capturing stream has unjoined work"), "unjoined-stream", "unjoined"),
    (facts("RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.", INVALIDATED),
     "pageable-copy", "not-pinned"),
    (facts(IMPLICIT, INVALIDATED, site=BACKWARD, frames=(BACKWARD,)), "legacy-stream", "implicit"),
    (facts(UNSUPPORTED, INVALIDATED, site=ITEM, frames=(ITEM,)), "hidden-sync", "host-read"),
    (facts(UNSUPPORTED, INVALIDATED, site=at(SITE, 11, "step", "torch.cuda.synchronize()"),
     frames=(at(SITE, 11, "step", "torch.cuda.synchronize()"), at("/venv/site-packages/torch/cuda/__init__.py", 1080, "synchronize", "return torch._C._cuda_synchronize()"))),
     "hidden-sync", "host-read"),
    (facts(UNSUPPORTED, INVALIDATED, site=MASK, frames=(MASK,), probe_syncs=frozenset({(SITE, 10)})), "hidden-sync", "host-read"),
]


# What torch 2.11 said on an H200 for each cause (the lead's field study, plain torch; chains
# first exception first, frames outermost first).
TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch"
FIELD_INVALIDATED = "AcceleratorError: CUDA error: operation failed due to a previous error during capture"
FIELD_KEPT_FRAMES = (
    at("/work/main/sample_models/train_step_keeps_loss.py", 30, "train_step", "loss.backward()"),
    at(f"{TORCH}/_tensor.py", 631, "backward", "torch.autograd.backward("),
    at(f"{TORCH}/autograd/__init__.py", 381, "backward", "_engine_run_backward("),
    at(f"{TORCH}/autograd/graph.py", 869, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"),
)
FIELD_LEGACY_LINE = at("/work/main/benchmarks/capture-causes-probe", 129, "step", "y = x * 2")
FIELD = [
    (facts("AcceleratorError: CUDA error: operation would make the legacy stream depend on a capturing blocking stream", FIELD_INVALIDATED,
           cuda_errors=("cudaErrorStreamCaptureImplicit", "cudaErrorStreamCaptureInvalidated"), frames=FIELD_KEPT_FRAMES, site=FIELD_KEPT_FRAMES[0],
           warnings=(ACCUMULATE,), held_graphs=1), "kept-autograd-graph", "implicit-with-held-graph"),
    (facts("AcceleratorError: CUDA error: operation would make the legacy stream depend on a capturing blocking stream", FIELD_INVALIDATED,
           frames=FIELD_KEPT_FRAMES, site=FIELD_KEPT_FRAMES[0], warnings=(ACCUMULATE,)), "kept-autograd-graph", "implicit-with-held-graph"),
    (facts("AcceleratorError: CUDA error: operation not permitted when stream is capturing", FIELD_INVALIDATED,
           frames=(at("/work/main/sample_models/amp_grad_scaler.py", 32, "train_step", "scaler.step(opt)  # expect: grad-scaler"),
                   at(f"{TORCH}/amp/grad_scaler.py", 478, "step", "retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)"),
                   at(f"{TORCH}/amp/grad_scaler.py", 371, "_maybe_opt_step", 'if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'),
                   at(f"{TORCH}/amp/grad_scaler.py", 371, "<genexpr>", 'if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'))),
     "grad-scaler", "grad-scaler-read"),
    (facts("RuntimeError: Attempting CUDA graph capture of step() for an instance of Adam but param_groups' capturable is False.",
           frames=(at("/work/main/benchmarks/capture-causes-probe", 97, "step", "opt.step()"), at(f"{TORCH}/optim/optimizer.py", 533, "wrapper", "out = func(*args, **kwargs)"),
                   at(f"{TORCH}/optim/adam.py", 222, "step", "self._accelerator_graph_capture_health_check()"),
                   at(f"{TORCH}/optim/optimizer.py", 479, "_accelerator_graph_capture_health_check", "raise RuntimeError("))),
     "optimizer-not-capturable", "capturable-false"),
    (facts("AcceleratorError: CUDA error: operation not permitted when stream is capturing", FIELD_INVALIDATED, frames=(FIELD_LEGACY_LINE,),
           site=FIELD_LEGACY_LINE, stream_zero=True), "legacy-stream", "stream-zero"),
    (facts("AcceleratorError: CUDA error: operation not permitted when stream is capturing", FIELD_INVALIDATED, frames=(FIELD_LEGACY_LINE,),
           site=FIELD_LEGACY_LINE), "capture-failed", "none"),  # the same without the probe's stream 0: no guess
]
TABLE += FIELD


@pytest.mark.parametrize(("found", "kind", "evidence"), TABLE, ids=[f"{k}-{e}" for _, k, e in TABLE])
def test_each_cause_is_named_by_its_own_evidence(found: Facts, kind: str, evidence: str) -> None:
    rule = classify(found)
    assert (rule.kind, rule.evidence) == (kind, evidence)


NOT_ENOUGH = [
    # "not permitted when stream is capturing" at a line that reads nothing, no probe sync there
    facts(UNSUPPORTED, INVALIDATED, site=MASK, frames=(MASK,)),
    # the user's own exception at a line with .item(): the Invalidated after it is no sync
    facts("ValueError: bad shape", INVALIDATED, site=ITEM, frames=(ITEM,)),
    # torch's message about something else entirely
    facts("RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.", INVALIDATED, site=ITEM, frames=(ITEM,)),
    # a kept-graph warning, but the failure is a sync at a host read: the read is what failed
    facts(UNSUPPORTED, INVALIDATED, site=ITEM, frames=(ITEM,), warnings=(ACCUMULATE,)),
]


@pytest.mark.parametrize("found", NOT_ENOUGH, ids=["no-read", "user-error", "other-message", "read-after-warning"])
def test_no_kind_is_guessed_without_its_evidence(found: Facts) -> None:
    kind = classify(found).kind
    assert kind != "kept-autograd-graph"
    assert kind == ("hidden-sync" if found.warnings else "capture-failed")


def test_a_pass_through_grad_scaler_is_not_its_host_read() -> None:
    """scaler.step -> optimizer.step -> a pageable copy deep in torch/optim: not GradScaler's read."""
    deep = at("/venv/site-packages/torch/optim/adam.py", 300, "_single_tensor_adam", "step_t += 1")
    found = facts("RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.",
                  frames=(at(SITE, 14, "step", "scaler.step(opt)"), at(SCALER, 454, "step", "retval = ..."), deep))
    assert classify(found).kind == "pageable-copy"


@pytest.mark.parametrize(("code", "reads"), [
    ("x = t.item()", True), ("float(loss)", True), ("torch.cuda.synchronize()", True), ("print(t)", True),
    ("if flag.any().item():", True), ("ys = t.tolist()", True), ("float(3)", False), ("loss.backward()", False),
    ("keep = h[h > 0]", False), ("scaler.step(opt)", False), ("not python (", False),
])
def test_host_reads_are_read_from_the_line(code: str, reads: bool) -> None:
    assert host_read_on(code) is reads


# --- the worker's facts from real chains ---------------------------------------------------


def at_path(file: str, function: str, lines: list[str], **scope: Any) -> Callable[..., Any]:
    """A function whose frame sits at ``file`` (its source in linecache), its body ``lines``
    run with ``scope`` as its globals."""
    body = "\n".join(f"    {line}" for line in lines)
    source = f"def {function}(*a):\n{body}\n"
    linecache.cache[file] = (len(source), None, source.splitlines(keepends=True), file)
    exec(compile(source, file, "exec"), scope)
    return scope[function]


def raising(file: str, exc: BaseException) -> Callable[..., Any]:
    return at_path(file, "step", ["raise exc"], exc=exc)


def as_captured(step: Callable[[], Any]) -> BaseException:
    """Run ``step`` as the plan runs the user's function under capture: its exception wrapped
    as the user's, then the Invalidated error the graph's context manager raises on exit."""
    try:
        try:
            try:
                step()
            except Exception as exc:
                raise UserError(exc) from None
        finally:
            raise torch.AcceleratorError(cuda("cudaErrorStreamCaptureInvalidated"))
    except Exception as outer:
        return outer
    raise AssertionError("the step did not fail")


def test_grad_scaler_failure_is_filed_at_scaler_step_with_torch_frames() -> None:
    unsupported = RuntimeError(cuda("cudaErrorStreamCaptureUnsupported"))
    read = at_path(SCALER, "_maybe_opt_step", ["raise exc  # found_inf .item()"], exc=unsupported)
    step_fn = at_path(SCALER, "step", ["return call()"], call=read)
    user = at_path("/proj/amp_train.py", "train_step", ["x = 1", "call()  # scaler.step(opt)"], call=step_fn)
    info = failure_info(as_captured(user), [])
    assert (info["kind"], info["evidence"]) == ("grad-scaler", "grad-scaler-read")
    assert info["exception"] == "RuntimeError" and info["message"] == "CUDA error: operation not permitted when stream is capturing"
    assert [f.function for f in info["frames"]][-3:] == ["train_step", "step", "_maybe_opt_step"]
    assert info["frames"][-1].file == SCALER and info["line"] == 3 and info["function"] == "train_step"
    assert "cudaErrorStreamCaptureUnsupported" in info["cuda_errors"] and "cudaErrorStreamCaptureInvalidated" in info["cuda_errors"]
    assert not any("launchprof" in str(f.file) for f in info["frames"])  # launchprof's own frames left out


def test_optimizer_not_capturable_names_the_class_and_its_constructor_line() -> None:
    opt = torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.1)  # the constructor line

    said = RuntimeError("Attempting CUDA graph capture of step() for an instance of Adam but param_groups' capturable is False.")
    check = at_path(OPTIMIZER, "_cuda_graph_capture_health_check", ["self = a[0]", "raise exc"], exc=said)
    info = failure_info(as_captured(lambda: check(opt)), [])
    assert info["kind"] == "optimizer-not-capturable"
    seen = info["optimizer"]
    assert (seen.name, seen.variable, seen.capturable, seen.fused, seen.accepts_fused) == ("Adam", "opt", False, False, True)
    assert seen.code == "opt = torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.1)  # the constructor line"
    assert seen.file == __file__ and seen.line > 0
    # torch 2.13's GradScaler.step leaves the inf check to an optimizer built with fused=True
    assert seen.scaler_skips_read_when_fused is True


def test_a_kept_loss_in_the_caller_is_named_at_the_line_that_binds_it() -> None:
    w = torch.nn.Parameter(torch.ones(3))
    loss = (w * 2).sum()  # the earlier call's loss, still held here
    loss.backward()
    detached = loss.detach()  # no graph: not a holder
    losses = [detached]
    losses.append((w * 3).sum())  # a list whose newest item holds a graph
    user = raising("/proj/loop.py", RuntimeError(cuda("cudaErrorStreamCaptureImplicit")))
    info = failure_info(as_captured(user), [])
    assert (info["kind"], info["evidence"]) == ("kept-autograd-graph", "implicit-with-held-graph")
    held = {g.name: g for g in info["held_graphs"]}
    assert set(held) == {"loss", "losses"}
    assert held["loss"].code == "loss = (w * 2).sum()  # the earlier call's loss, still held here"
    assert (held["loss"].holder_kind, held["loss"].grad_fn, held["loss"].scope) == ("variable", "SumBackward0", f"{test_a_kept_loss_in_the_caller_is_named_at_the_line_that_binds_it.__name__}()")
    # the line that stores into the list (its text built here so no later line matches it too)
    assert held["losses"].holder_kind == "list" and held["losses"].code == "losses" + ".append((w * 3).sum())  # a list whose newest item holds a graph"
    del losses, loss, detached


def test_without_a_held_graph_906_is_the_legacy_stream() -> None:
    user = raising("/proj/legacy.py", RuntimeError(cuda("cudaErrorStreamCaptureImplicit")))
    info = failure_info(as_captured(user), [])
    assert info["kind"] == "legacy-stream" and info["held_graphs"] == []


def test_the_accumulate_grad_warning_is_evidence_of_a_kept_graph() -> None:
    user = raising("/proj/warned.py", RuntimeError(cuda("cudaErrorStreamCaptureInvalidated")))
    info = failure_info(as_captured(user), [ACCUMULATE, ACCUMULATE])
    assert info["kind"] == "kept-autograd-graph" and info["warnings"] == [ACCUMULATE.splitlines()[0][:300]]


# --- warnings: recorded as evidence, shown as they would have been ------------------------


def test_warnings_are_recorded_and_the_users_still_shown() -> None:
    seen: list[str] = []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with recorded_warnings(seen):
            warnings.warn("the user's own warning", UserWarning)
            warnings.warn(ACCUMULATE, UserWarning)
    assert seen == ["the user's own warning", ACCUMULATE]
    assert [str(w.message) for w in shown] == ["the user's own warning"]  # the capture-only one is not shown


def test_a_users_filter_still_hides_their_warning_but_not_the_evidence() -> None:
    seen: list[str] = []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("ignore")
        with recorded_warnings(seen):
            warnings.warn("filtered by the user", UserWarning)
            warnings.warn(ACCUMULATE, UserWarning)
        warnings.warn("after", UserWarning)
    assert seen == [ACCUMULATE] and shown == []


# --- the analysis reads the same table -----------------------------------------------------


def test_the_analysis_adds_the_probes_sync_lines() -> None:
    cap = CaptureEvent(
        ok=False, kind="capture-failed", chain=[UNSUPPORTED, INVALIDATED], cuda_errors=["cudaErrorStreamCaptureUnsupported"],
        frames=[MASK], warnings=[], held_graphs=[], file=SITE, line=10, code="keep = h[h > 0]",
    )
    assert cause_of(cap) == ("capture-failed", "none")
    probe = ProbeEvent(syncs=[ProbeEntry(file=SITE, line=10, op="nonzero", kind="hidden-sync")])
    assert cause_of(cap, probe) == ("hidden-sync", "host-read")


@pytest.mark.parametrize("name", [n for n in run_names() if not (load_evidence(n).capture or CaptureEvent(ok=True)).ok])
def test_recorded_failures_keep_their_kind_and_the_table_agrees(name: str) -> None:
    """Runs recorded before the facts were kept keep their recorded kind; the table, given
    what those runs recorded, names the same kind. A run recorded with the facts (the real-code
    samples) is classified again by the analysis, which agrees with the worker."""
    ev = load_evidence(name)
    cap = ev.capture
    assert cap is not None
    if cap.frames is not None:
        assert cause_of(cap, ev.probe)[0] == cap.kind
        return
    assert cause_of(cap, ev.probe) == (cap.kind, None)
    site = Site(file=cap.file, line=cap.line, code=cap.code) if cap.file else None
    syncs = frozenset((s.file, s.line) for s in ev.probe.syncs) if ev.probe else frozenset()
    again = classify(Facts(texts=tuple(cap.chain), cuda_errors=tuple(cap.cuda_errors), site=site, probe_syncs=syncs))
    assert again.kind == cap.kind
