"""Real code, recorded on an H200: a training step whose caller keeps the loss, a GradScaler
AMP step, a transformers GPT-2 step and a static-cache Llama decode (sample_models/).

Each run is checked for what a CUDA-graphs engineer would say of it: the cause torch named,
at the user's line, a fix that names what to write, a measured figure for the part that can
be captured, no finding inside an installed library, and a script that ran to its end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recorded import SAMPLES, expected_markers, load_evidence, recorded, report_of

REAL = recorded(["train_step_keeps_loss", "amp_grad_scaler", "hf_gpt2_step", "hf_static_decode"])


def marker_line(name: str, kind: str) -> int:
    [(_, _, line)] = [m for m in expected_markers(SAMPLES / f"{name}.py") if m[0] == kind]
    return line


@pytest.mark.parametrize("name", REAL)
def test_every_finding_is_at_the_users_line_and_the_script_ran_to_its_end(name):
    report = report_of(name)
    assert all(h.file is None or h.file.startswith("sample_models/") for h in report.hazards), [(h.kind, h.file) for h in report.hazards]
    assert report.run is not None and report.run.script_exit == 0, report.run
    errors = {(h.kind, Path(h.file or "").name, h.line) for h in report.hazards if h.severity in ("error", "warning")}
    assert expected_markers(SAMPLES / f"{name}.py") <= errors
    assert not {e for e in errors if e[0] in ("hidden-sync", "capture-failed", "host-side-effect")}, errors


def test_a_kept_loss_is_named_at_the_callers_line_and_the_step_measured_once_fixed():
    report = report_of("train_step_keeps_loss")
    [kept] = [h for h in report.hazards if h.kind == "kept-autograd-graph"]
    assert kept.severity == "error" and kept.line == marker_line("train_step_keeps_loss", "kept-autograd-graph")
    assert kept.params.get("variable") == "loss" or "loss" in str(kept.params)
    assert kept.fix is not None and "detach" in (kept.fix.after or "") + (kept.fix.note or "")
    [fixed] = report.assumes_fix
    assert fixed.kind == "kept-autograd-graph" and [v.name for v in fixed.variables] == ["loss"]
    assert "speedup" in fixed.figures
    # The code as written does not capture (an error hazard): no graphs-help over it; the
    # speedup is the one measured once fixed.
    assert report.verdict == "not-capturable" and report.speedup is not None and report.speedup.low > 1.5
    assert report.validation is not None and report.validation.matches == report.validation.calls_compared


def test_a_grad_scaler_step_gets_ranked_options_and_a_measured_partial_capture():
    report = report_of("amp_grad_scaler")
    [scaler] = [h for h in report.hazards if h.kind == "grad-scaler"]
    assert scaler.line == marker_line("amp_grad_scaler", "grad-scaler") and report.verdict == "not-capturable"
    part = report.partial_capture
    assert part is not None and part.status == "measured" and part.speedup is not None
    assert part.file == "sample_models/amp_grad_scaler.py" and part.module == "model" and "make_graphed_callables" in (part.snippet or "")
    options = scaler.fix.params["options"]
    assert "bf16-autocast" in options and "graphed-forward-backward" in options
    assert scaler.fix.params["partial_speedup"] == pytest.approx(part.speedup.median)


def test_a_library_models_per_call_objects_are_not_host_side_effects():
    """GPT-2 makes its cache, masks and output collections in every call: nothing the caller
    can reach afterwards, so nothing to report, and the step replays as measured."""
    report = report_of("hf_gpt2_step")
    assert not [h for h in report.hazards if h.severity in ("error", "warning")]
    assert report.verdict == "graphs-help" and report.validation.matches == report.validation.calls_compared
    probe = load_evidence("hf_gpt2_step").probe
    assert probe is not None and not probe.effects


def test_a_static_cache_decode_is_left_as_the_loop_left_it():
    """StaticCache advances a device counter of its own in every call: launchprof's extra calls
    ran on state put back after them, so the loop decoded to its end (script_exit 0 above) and
    no note says state was lost."""
    report = report_of("hf_static_decode")
    assert report.verdict == "graphs-help" and report.validation.matches == report.validation.calls_compared
    codes = {n.code for n in report.findings}
    assert "state-lost" not in codes and "bursts-stopped" not in codes
