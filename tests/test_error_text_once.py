"""A CUDA error's text is said once: in a failed capture's finding (whose message and CUDA
error list both carry it, as worker/capture_facts.py records them) and in a script's failure
(the "stopped early" line names it; the asynchronous-error advice does not repeat it); never
torch's boilerplate that follows it."""

from __future__ import annotations

from pathlib import Path

from launchprof.analysis import analyse
from launchprof.model.hazard_codes import HazardCode
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.words.hazard_text import hazard_message
from launchprof.run import load_run
from tests.test_script_failed import ASSERT, _failed_run

NOT_PERMITTED = "CUDA error: operation not permitted when stream is capturing"
BOILERPLATE = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
)


def _capture_failed(message: str, cuda_errors: list[str]) -> str:
    return hazard_message(HazardCode.CAPTURE_FAILED.value, {"exception": "AcceleratorError", "message": message, "cuda_errors": cuda_errors})


def test_the_capture_error_is_said_once_with_the_chains_other_errors() -> None:
    text = _capture_failed(NOT_PERMITTED, sorted([NOT_PERMITTED, "cudaErrorStreamCaptureInvalidated"]))
    assert text.count("operation not permitted when stream is capturing") == 1
    assert text == f"capture failed: AcceleratorError: {NOT_PERMITTED} (cudaErrorStreamCaptureInvalidated)"


def test_an_error_named_inside_the_message_is_not_repeated() -> None:
    text = _capture_failed("CUDA error: cudaErrorStreamCaptureUnsupported", ["cudaErrorStreamCaptureUnsupported"])
    assert text.count("cudaErrorStreamCaptureUnsupported") == 1


def test_no_raw_dump_only_the_first_line_and_at_most_its_limit() -> None:
    text = _capture_failed(f"{NOT_PERMITTED}\n{BOILERPLATE}", [NOT_PERMITTED])
    assert "asynchronously reported" not in text and "TORCH_USE_CUDA_DSA" not in text and "\n" not in text
    long = _capture_failed("CUDA error: " + "x" * 2000, [])
    assert len(long) < 400 and long.endswith("…")


def test_a_script_killed_by_a_device_assert_names_the_error_once(tmp_path: Path) -> None:
    report = analyse(load_run(_failed_run(tmp_path, ASSERT)))
    text = renderer_for("text", RenderOptions(width=100)).render(report)
    assert " ".join(text.split()).count("device-side assert triggered") == 1, text
    assert any(n.startswith("asynchronous CUDA error: it surfaced at") for n in report.notes)
