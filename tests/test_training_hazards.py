"""A training step's capture failures as hazards, fixes and words, from hand-built events.

The events are what worker/capture_facts.py writes for each cause (tests/test_capture_causes.py
checks that side); the script they point at is written to a temporary folder, so each
hazard's line, fix and every format's rendering are asserted on real source lines.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import reports
from launchprof.analysis.concurrency import concurrency_notes
from launchprof.events.capture_events import CaptureEvent, HeldGraph, OptimizerSeen, RaceCheckEvent, RaceOp
from launchprof.events.lifecycle_events import CallSiteEvent, TargetEvent
from launchprof.events.observation_events import ProbeEntry, ProbeEvent
from launchprof.events.record import Site
from launchprof.hazards.rules import find_hazards
from launchprof.model.core import Report
from launchprof.model.findings import FixCode, NoteCode
from launchprof.model.hazard_records import Hazard
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.words.notes_text import note_text
from launchprof.run.evidence import Evidence

SCRIPT = '''\
import torch

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.Adam(
    model.parameters(), lr=1e-3
)
scaler = torch.amp.GradScaler()


def step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def amp_step(x, y):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.detach()


def main():
    x, y = torch.randn(4, 8, device="cuda"), torch.randn(4, 8, device="cuda")
    for _ in range(50):
        loss = step(x, y)
'''
LINES = {text.strip(): i for i, text in enumerate(SCRIPT.splitlines(), 1)}
INVALIDATED = "AcceleratorError: CUDA error: operation failed due to a previous error during capture"
SCALER = "/venv/lib/python3.11/site-packages/torch/amp/grad_scaler.py"


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return str(path)


def site(file: str, text: str, function: str = "step") -> dict:
    return {"file": file, "line": LINES[text], "code": text, "function": function}


def evidence(file: str, capture: CaptureEvent, target: str = "step", probe: ProbeEvent | None = None) -> Evidence:
    return Evidence(
        target=TargetEvent(name=target, qualname=target, file=file, line=LINES[f"def {target}(x, y):"]),
        call_site=CallSiteEvent(file=file, line=LINES["loss = step(x, y)"], code="loss = step(x, y)", function="main"),
        capture=capture, probe=probe or ProbeEvent(),
    )


def failed(file: str, text: str, chain: list[str], **kw: object) -> CaptureEvent:
    at = site(file, text, kw.pop("function", "step"))  # type: ignore[arg-type]
    return CaptureEvent(
        ok=False, index=17, exception=chain[0].split(":")[0], message=chain[0].split(": ", 1)[1], chain=chain,
        cuda_errors=sorted({c for c in kw.pop("cuda_errors", [])}), frames=kw.pop("frames", [Site(**at)]),  # type: ignore[arg-type]
        warnings=[], held_graphs=kw.pop("held_graphs", []), **at, **kw,  # type: ignore[arg-type]
    )


def only(hazards: list[Hazard], kind: str) -> Hazard:
    found = [h for h in hazards if h.kind == kind]
    assert len(found) == 1, [(h.kind, h.line) for h in hazards]
    return found[0]


def kept_loss(file: str) -> Evidence:
    held = HeldGraph(name="loss", holder_kind="variable", scope="main()", grad_fn="MseLossBackward0", **site(file, "loss = step(x, y)", "main"))
    stale = "RuntimeError: During CUDA graph capture, autograd node 'torch::autograd::AccumulateGrad' has a stale reference to the default stream (stream 0) from warmup."
    return evidence(file, failed(file, "loss.backward()", [stale, INVALIDATED], held_graphs=[held], cuda_errors=["cudaErrorStreamCaptureInvalidated"]))


def test_a_kept_loss_is_filed_at_the_callers_line_with_the_step_returning_it_detached(script: str) -> None:
    h = only(find_hazards(kept_loss(script)), "kept-autograd-graph")
    assert (h.severity, h.line, h.params["name"], h.params["failed_line"]) == ("error", LINES["loss = step(x, y)"], "loss", LINES["loss.backward()"])
    assert h.message.startswith("`loss` (a variable in `main()`) keeps an earlier call's autograd graph alive (its grad_fn is MseLossBackward0): ")
    assert "capture failed at `loss.backward()`" in h.message and "stale reference to the default stream" in h.message
    assert "hidden" not in h.message and ".item()" not in h.hint  # no word of a sync
    fix = h.fix
    assert fix is not None and fix.code == FixCode.DETACH_RETURN.value
    assert (fix.line, fix.before, fix.after) == (LINES["return loss"], "return loss", "return loss.detach()")
    assert fix.note.startswith("Return it detached: the caller's `loss` (line 30)") and "`del loss` before the next call" in fix.note


def test_a_held_graph_not_bound_by_the_call_gets_del_in_words(script: str) -> None:
    ev = kept_loss(script)
    cap = ev.capture
    other = dataclasses.replace(cap.held_graphs[0], name="out", line=LINES["x, y = torch.randn(4, 8, device=\"cuda\"), torch.randn(4, 8, device=\"cuda\")"])
    h = only(find_hazards(dataclasses.replace(ev, capture=dataclasses.replace(cap, held_graphs=[other]))), "kept-autograd-graph")
    assert h.params["name"] == "out" and h.fix.code == FixCode.DROP_KEPT_GRAPH.value and h.fix.after == ""
    assert h.fix.note.startswith("`del out` before the next call of the step")


def test_no_held_name_files_it_at_the_failing_line(script: str) -> None:
    cap = dataclasses.replace(kept_loss(script).capture, held_graphs=[])
    h = only(find_hazards(evidence(script, cap)), "kept-autograd-graph")
    assert h.line == LINES["loss.backward()"] and h.params["name"] is None
    assert h.message.startswith("an earlier call's autograd graph is still alive (held where launchprof cannot name it)")
    assert h.fix.code == FixCode.DROP_KEPT_GRAPH.value and "Drop every reference" in h.fix.note


def test_optimizer_not_capturable_is_fixed_at_its_constructor(script: str) -> None:
    built = OptimizerSeen(name="Adam", variable="opt", capturable=False, fused=False, accepts_fused=True, file=script, line=LINES["opt = torch.optim.Adam("], code="opt = torch.optim.Adam(")
    said = "RuntimeError: Attempting CUDA graph capture of step() for an instance of Adam but param_groups' capturable is False."
    h = only(find_hazards(evidence(script, failed(script, "opt.step()", [said, INVALIDATED], optimizer=built))), "optimizer-not-capturable")
    assert (h.line, h.params["optimizer"], h.params["variable"]) == (LINES["opt = torch.optim.Adam("], "Adam", "opt")
    assert h.message == f"`opt` (Adam) is built without capturable=True, so its step() cannot be captured: capture failed at `opt.step()` (line {LINES['opt.step()']})"
    assert h.fix.before == "opt = torch.optim.Adam(\n    model.parameters(), lr=1e-3\n)"
    assert h.fix.after == "opt = torch.optim.Adam(\n    model.parameters(), lr=1e-3, capturable=True\n)"  # the user's text kept
    assert "learning-rate scheduler" in h.fix.note and "does not check for one here" in h.fix.note


@pytest.mark.parametrize(("line", "after"), [
    ("opt = torch.optim.AdamW(params, capturable=False)  # set by hand", "opt = torch.optim.AdamW(params, capturable=True)"),
    ("opt: Any = AdamW(params)", "opt: Any = AdamW(params, capturable=True)"),
    ("opt = AdamW()", "opt = AdamW(capturable=True)"),
])
def test_capturable_is_set_on_the_users_own_call(tmp_path: Path, line: str, after: str) -> None:
    from launchprof.hazards.fixes.fix_source import source_line
    from launchprof.hazards.fixes.training_fixes import with_keywords

    path = tmp_path / "opt.py"
    path.write_text(f"x = 1\n{line}\n", encoding="utf-8")
    assert with_keywords(source_line(str(path), 2), "AdamW", {"capturable": True}) == (line.split("  #")[0], after)
    assert with_keywords(source_line(str(path), 2), "SGD", {"capturable": True}) is None  # no call of that class


def test_optimizer_without_its_constructor_is_filed_at_the_step(script: str) -> None:
    said = "RuntimeError: Attempting CUDA graph capture of step() for an instance of SGD but param_groups' capturable is False."
    h = only(find_hazards(evidence(script, failed(script, "opt.step()", [said, INVALIDATED]))), "optimizer-not-capturable")
    assert (h.line, h.params["optimizer"]) == (LINES["opt.step()"], "SGD")  # named from torch's message
    assert h.fix.after == "" and h.fix.note.startswith("Add capturable=True where SGD is built (launchprof did not find that line)")


def scaler_evidence(script: str, **optimizer: object) -> Evidence:
    frames = [
        Site(**site(script, "scaler.step(opt)", "amp_step")),
        Site(file=SCALER, line=454, function="step", code="retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)"),
        Site(file=SCALER, line=371, function="_maybe_opt_step", code='if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'),
        Site(file=SCALER, line=371, function="<genexpr>", code='if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):'),
    ]
    seen = OptimizerSeen(name="Adam", variable="opt", file=script, line=LINES["opt = torch.optim.Adam("], code="opt = torch.optim.Adam(", **optimizer)  # type: ignore[arg-type]
    unsupported = "AcceleratorError: CUDA error: operation not permitted when stream is capturing"
    cap = failed(script, "scaler.step(opt)", [unsupported, INVALIDATED], function="amp_step", frames=frames, optimizer=seen, cuda_errors=["cudaErrorStreamCaptureUnsupported"])
    return evidence(script, cap, target="amp_step")


def test_grad_scaler_is_filed_at_scaler_step_with_the_fused_optimizer_first(script: str) -> None:
    h = only(find_hazards(scaler_evidence(script, capturable=True, fused=False, accepts_fused=True, scaler_skips_read_when_fused=True)), "grad-scaler")
    assert (h.line, h.params["library_function"], h.params["library_line"]) == (LINES["scaler.step(opt)"], "_maybe_opt_step", 371)
    assert h.details["library_frame"] == {"file": SCALER, "line": 371, "function": "_maybe_opt_step"}
    assert "reads its inf check (found_inf) on the host" in h.message and "torch/amp/grad_scaler.py:371" in h.message
    fix = h.fix
    assert fix.params["options"] == ["fused-optimizer", "bf16-autocast", "graphed-forward-backward"] and fix.params["partial_speedup"] is None
    assert fix.line == LINES["opt = torch.optim.Adam("] and fix.after == "opt = torch.optim.Adam(\n    model.parameters(), lr=1e-3, fused=True, capturable=True\n)"
    note = fix.note
    assert note.index("1) build Adam with fused=True") < note.index("2) autocast to bfloat16") < note.index("3) capture forward and backward only")
    assert "A suggestion, not verified" in note and "not measured here" in note


def test_grad_scaler_without_a_fused_path_writes_the_bf16_step(script: str) -> None:
    h = only(find_hazards(scaler_evidence(script, accepts_fused=False, scaler_skips_read_when_fused=False)), "grad-scaler")
    assert h.fix.params["options"] == ["bf16-autocast", "graphed-forward-backward"]
    assert (h.fix.line, h.fix.before, h.fix.after) == (LINES["scaler.step(opt)"], "scaler.step(opt)", "opt.step()")
    measured = dataclasses.replace(h.fix, params={**h.fix.params, "partial_speedup": 1.12})
    from launchprof.render.words.fix_text import fix_sentence

    assert "(measured x1.12)" in fix_sentence(measured)


def test_grad_scaler_cites_the_measured_partial_capture(script: str) -> None:
    """The third option's gain is the step's measured speedup with its largest module graphed
    (the partial-capture event's medians), not a figure of its own; absent when not measured."""
    from launchprof.events.training_events import PartialCaptureEvent
    from launchprof.render.words.fix_text import fix_sentence

    ev = scaler_evidence(script, accepts_fused=False, scaler_skips_read_when_fused=False)
    measured = PartialCaptureEvent(index=12, status="measured", eager_us=[1300.0, 1310.0, 1290.0, 1305.0], graphed_us=[1180.0, 1190.0, 1170.0, 1185.0])
    fix = only(find_hazards(dataclasses.replace(ev, partial_capture=measured)), "grad-scaler").fix
    assert fix.params["partial_speedup"] == pytest.approx(1302.5 / 1182.5)
    assert "(measured x1.10)" in fix_sentence(fix)
    skipped = PartialCaptureEvent(index=12, status="not-measured", reason="hooks")
    fix = only(find_hazards(dataclasses.replace(ev, partial_capture=skipped)), "grad-scaler").fix
    assert fix.params["partial_speedup"] is None and "not measured here" in fix_sentence(fix)


def test_grad_scalers_read_is_one_finding_not_also_a_hidden_sync(script: str) -> None:
    """The probe's sync-debug warning lands on `scaler.step(opt)` too: the grad-scaler finding explains it."""
    ev = scaler_evidence(script, accepts_fused=False)
    probe = ProbeEvent(syncs=[ProbeEntry(op="_local_scalar_dense", kind="hidden-sync", what="host read", **site(script, "scaler.step(opt)", "amp_step"))])
    found = find_hazards(dataclasses.replace(ev, probe=probe))
    assert [h.kind for h in found] == ["grad-scaler"]
    elsewhere = ProbeEntry(op="_local_scalar_dense", kind="hidden-sync", what="host read", **site(script, "scaler.update()", "amp_step"))
    found = find_hazards(dataclasses.replace(ev, probe=ProbeEvent(syncs=[*probe.syncs, elsewhere])))
    assert sorted((h.kind, h.line) for h in found) == [("grad-scaler", LINES["scaler.step(opt)"]), ("hidden-sync", LINES["scaler.update()"])]


def test_work_on_stream_zero_is_legacy_stream_with_the_line_that_enters_it(script: str) -> None:
    unsupported = "AcceleratorError: CUDA error: operation not permitted when stream is capturing"
    cap = failed(script, "loss.backward()", [unsupported, INVALIDATED], cuda_errors=["cudaErrorStreamCaptureUnsupported"])
    entered = ProbeEntry(op="use_stream", stream=0, origin=93, **site(script, "opt.zero_grad(set_to_none=True)"))
    h = only(find_hazards(evidence(script, cap, probe=ProbeEvent(streams=[entered]))), "legacy-stream")
    assert (h.line, h.params["evidence"], h.params["stream_line"]) == (LINES["loss.backward()"], "stream-zero", LINES["opt.zero_grad(set_to_none=True)"])
    assert "which `opt.zero_grad(set_to_none=True)` (line 11) makes current" in h.message
    other = dataclasses.replace(entered, stream=93)  # a side stream of its own: no legacy stream, no guess
    assert [h.kind for h in find_hazards(evidence(script, cap, probe=ProbeEvent(streams=[other])))] == ["capture-failed"]


def test_legacy_stream_is_its_own_kind(script: str) -> None:
    implicit = "AcceleratorError: CUDA error: operation would make the legacy stream depend on a capturing blocking stream"
    cap = failed(script, "loss.backward()", [implicit, INVALIDATED], cuda_errors=["cudaErrorStreamCaptureImplicit"])
    h = only(find_hazards(evidence(script, cap)), "legacy-stream")
    assert h.line == LINES["loss.backward()"] and h.fix.code == FixCode.OFF_LEGACY_STREAM.value
    assert "legacy default stream" in h.message and h.fix.after == ""


def test_an_unnamed_cause_is_capture_failed_with_torchs_message_and_no_other_kinds_hint(script: str) -> None:
    said = "RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture."
    h = only(find_hazards(evidence(script, failed(script, "loss.backward()", [said, INVALIDATED]))), "capture-failed")
    assert h.message.startswith("capture failed: RuntimeError: Cannot call CUDAGeneratorImpl::current_seed") and h.line == LINES["loss.backward()"]
    assert not any(word in h.hint for word in (".item()", "synchronis", "allocation", "pinned"))


# --- every format ------------------------------------------------------------------------------


def training_report(script: str) -> Report:
    found = find_hazards(kept_loss(script)) + find_hazards(scaler_evidence(script, accepts_fused=True, scaler_skips_read_when_fused=True))
    return dataclasses.replace(reports.not_capturable(Path(script).parent), script=script, target="step", hazards=found)


@pytest.mark.parametrize("fmt", ["md", "sarif", "junit", "html", "json", "text"])
def test_every_format_shows_the_new_kinds_and_their_fixes(script: str, fmt: str) -> None:
    report = training_report(script)
    text = renderer_for(fmt, RenderOptions(project_root=Path(script).parent)).render(report)
    for kind in ("kept-autograd-graph", "grad-scaler"):
        assert kind in text
    if fmt == "junit":
        cases = {c.get("name"): c for c in ET.fromstring(text).iter("testcase")}
        assert cases["kept-autograd-graph"].find("failure") is not None and cases["legacy-stream"].find("failure") is None
        assert cases["optimizer-not-capturable"].find("skipped") is None  # capture ran: a passed check
    elif fmt == "sarif":
        run = json.loads(text)["runs"][0]
        rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
        assert {"kept-autograd-graph", "optimizer-not-capturable", "grad-scaler", "legacy-stream"} <= rules
        fixes = [r["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] for r in run["results"] if r.get("fixes")]
        assert "    return loss.detach()" not in fixes  # not verified here (no retry captured): only verified fixes are applied
        kept = next(r for r in run["results"] if r["ruleId"] == "kept-autograd-graph")
        assert kept["properties"]["fix"]["state"] == "suggestion"
    elif fmt == "json":
        data = json.loads(text)
        kept = next(h for h in data["hazards"] if h["kind"] == "kept-autograd-graph")
        assert kept["params"]["name"] == "loss" and kept["fix"]["after"] == "return loss.detach()"
    else:
        assert "return loss.detach()" in text


# --- no fork/join advice for autograd's backward ------------------------------------------------


def _chains(backward_ops: int | None, names: tuple[str, ...] = ("aten.mm.default",) * 4) -> RaceCheckEvent:
    ops = [RaceOp(op=n, stream=7, deps=[]) for n in names]  # four independent ops: a fork/join would help
    return RaceCheckEvent(status="ok", origin_stream=7, ops=ops, ops_total=len(ops), backward_ops=backward_ops)


def test_independent_chains_get_fork_join_advice_only_outside_backward() -> None:
    forward = concurrency_notes(None, _chains(0), None)
    assert [n.code for n in forward] == [NoteCode.INDEPENDENT_CHAINS.value]
    backward = concurrency_notes(None, _chains(3), None)
    assert [(n.code, n.params["why"]) for n in backward] == [(NoteCode.NO_STREAM_ADVICE.value, "backward")]
    assert "proposes no fork/join" in note_text(backward[0]) and "fork/join of the other chains" not in note_text(backward[0])
    # a run recorded before the count: backward's ops by their names
    old = concurrency_notes(None, _chains(None, ("aten.mm.default", "aten.threshold_backward.default", "aten.mm.default", "aten.add_.Tensor")), None)
    assert [n.code for n in old] == [NoteCode.NO_STREAM_ADVICE.value]
    kept = concurrency_notes(None, _chains(0), None, kept_graph=True)
    assert [(n.code, n.params["why"]) for n in kept] == [(NoteCode.NO_STREAM_ADVICE.value, "kept-autograd-graph")]


def test_the_race_checks_log_counts_the_ops_run_inside_backward() -> None:
    import torch

    from launchprof.worker.race_check import AccessLog

    log = AccessLog()

    class Traced(torch.autograd.Function):
        """Logs one op in its forward and one in its backward, as the sanitizer's handler would."""

        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            log.launch(7, {1}, {2}, "aten.mul.Tensor")
            return x * 2

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            log.launch(7, {2}, {3}, "aten.mul.Tensor")
            return grad * 2

    w = torch.ones(3, requires_grad=True)
    Traced.apply(w).sum().backward()
    assert (len(log.ops), log.backward_ops) == (2, 1)
