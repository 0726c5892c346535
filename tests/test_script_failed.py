"""Script failures (issue 13 item 4): the verdict script-failed in every format, and the
asynchronous-CUDA-error advice with the exact blocking re-run command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import launchprof.commands.analyze as analyze_cmd
from launchprof.analysis import analyse
from launchprof.analysis.failure import LOCATED, blocking_command, is_async_cuda_error
from launchprof.commands.analyze import AnalyzeOptions
from launchprof.events.lifecycle_events import ScriptException
from launchprof.run.evidence import parse_events
from launchprof.run.header_records import RUN_FORMAT_VERSION, RunHeader, WorkerOutcome
from launchprof.render import RenderOptions, renderer_for
from launchprof.run import load_run, write_run
from launchprof.commands.worker_runner import WorkerResult
from tests.recorded import RUNS
from tests.notes_said import said

ASSERT = {
    "type": "AcceleratorError",
    "message": "CUDA error: device-side assert triggered",
    "file": "sample_models/device_assert.py",
    "line": 34,
    "traceback": "Traceback ...\ntorch.AcceleratorError: CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call",
}


def _failed_run(tmp_path: Path, exception: dict, extra: list[dict] | None = None) -> Path:
    machine = next(e for e in load_run(RUNS / "decode_loop.lprun").events if e["type"] == "machine")
    events = [
        machine,
        {"type": "script-end", "t": 1.0, "status": "exception", "exit_code": 1, "exception": exception, "calls": 0},
        *(extra or []),
        {"type": "worker-end", "t": 1.1, "wall_s": 1.1},
    ]
    header = RunHeader(
        format_version=RUN_FORMAT_VERSION, launchprof_version="0", created="2026-01-01T00:00:00+00:00",
        script="sample_models/device_assert.py", target=None, argv=["--n", "it's 2"], project_root=str(tmp_path),
        worker=WorkerOutcome(returncode=0, wall_s=1.1),
    )
    return write_run(header, events, {}, tmp_path / "failed.lprun", {})


def test_async_markers():
    assert is_async_cuda_error(ScriptException(**ASSERT))
    assert is_async_cuda_error(ScriptException(message="CUDA error: an illegal memory access was encountered"))
    assert not is_async_cuda_error(ScriptException(message="CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not is_async_cuda_error(ScriptException(message="name 'x' is not defined"))


def test_device_assert_says_where_it_surfaced_and_the_exact_command(tmp_path):
    report = analyse(load_run(_failed_run(tmp_path, ASSERT)))
    assert report.verdict == "script-failed"
    advice = next(n for n in report.notes if n.startswith("asynchronous CUDA error"))
    assert "surfaced at sample_models/device_assert.py:34" in advice
    command = blocking_command("sample_models/device_assert.py", ["--n", "it's 2"])
    assert command == "CUDA_LAUNCH_BLOCKING=1 python sample_models/device_assert.py --n 'it'\"'\"'s 2'"
    assert command in advice and "--locate-async" in advice and "twice" in advice


def test_a_plain_exception_gets_no_cuda_advice(tmp_path):
    plain = {"type": "ValueError", "message": "bad value", "file": "sample_models/device_assert.py", "line": 3}
    report = analyse(load_run(_failed_run(tmp_path, plain)))
    assert report.verdict == "script-failed"
    assert not any("CUDA_LAUNCH_BLOCKING" in n for n in report.notes)


def test_a_located_run_shows_the_launching_line_instead(tmp_path):
    note = {"type": "note", "t": 1.05, "text": f"{LOCATED}sample_models/device_assert.py:17 (re-run ...)"}
    report = analyse(load_run(_failed_run(tmp_path, ASSERT, [note])))
    assert any(n.startswith(LOCATED + "sample_models/device_assert.py:17") for n in report.notes)
    assert not any(n.startswith("asynchronous CUDA error") for n in report.notes)


def test_a_located_record_shows_the_launching_line_instead(tmp_path):
    """The note --locate-async writes now: a code and the line, no sentence."""
    note = {"type": "note", "t": 1.05, "code": "async-located", "params": {"file": "sample_models/device_assert.py", "line": 17}}
    report = analyse(load_run(_failed_run(tmp_path, ASSERT, [note])))
    assert any(n.startswith(LOCATED + "sample_models/device_assert.py:17") for n in report.notes)
    assert not any(n.startswith("asynchronous CUDA error") for n in report.notes)


@pytest.mark.parametrize("fmt", ["text", "json", "md", "html", "sarif", "junit"])
def test_script_failed_renders_in_every_format(fmt, tmp_path):
    report = analyse(load_run(_failed_run(tmp_path, ASSERT)))
    text = renderer_for(fmt, RenderOptions(width=200)).render(report)
    assert text
    if fmt == "json":
        assert json.loads(text)["verdict"] == "script-failed"
    if fmt in ("text", "md", "html"):
        assert "CUDA_LAUNCH_BLOCKING=1" in " ".join(text.split()).replace("&#39;", "'")


def test_locate_async_reruns_with_blocking_launches(tmp_path, monkeypatch):
    """The re-run: a new worker, no target, CUDA_LAUNCH_BLOCKING=1; its exception site becomes the note."""
    seen: dict = {}
    launch_line = {"type": "AcceleratorError", "message": ASSERT["message"], "file": str(tmp_path / "s.py"), "line": 17}

    def fake_worker(config, rundir, timeout, show_output, on_events=None, output_to_stderr=False, extra_env=None):
        seen.update(target=config.target, env=extra_env, calibrate=config.calibrate)
        return WorkerResult([{"type": "script-end", "status": "exception", "exception": launch_line}], 0, False, False, 1.0, None)

    monkeypatch.setattr(analyze_cmd, "run_worker", fake_worker)
    first = WorkerResult([{"type": "script-end", "status": "exception", "exception": ASSERT}], 0, False, False, 1.0, None)
    options = AnalyzeOptions(script=tmp_path / "s.py", locate_async=True)
    from rich.console import Console

    analyze_cmd.locate_async(options, tmp_path, first, parse_events(first.events), Console(file=open("/dev/null", "w")))
    assert seen == {"target": None, "env": {"CUDA_LAUNCH_BLOCKING": "1"}, "calibrate": False}
    assert first.events[-1]["type"] == "note"
    assert said(first.events[-1]).startswith(f"{LOCATED}s.py:17") and "twice" in said(first.events[-1])


def test_locate_async_is_in_help():
    from typer.testing import CliRunner

    from launchprof.cli import app

    assert "--locate-async" in CliRunner().invoke(app, ["analyze", "--help"]).output


def test_a_cause_with_brackets_is_printed_as_written(tmp_path):
    """A gloo or CUDA message quotes its source as ``[/path/pair.cc:553]``: the one-line
    failure on the terminal prints it as it is, rather than read it as a closing markup tag."""
    import io

    from rich.console import Console

    from launchprof.errors import ExitCode

    message = "[/__w/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer"
    run = load_run(_failed_run(tmp_path, {"type": "RuntimeError", "message": message, "file": "sample_models/device_assert.py", "line": 3}))
    result = WorkerResult(run.events, 0, False, False, 1.1, None)
    out = io.StringIO()
    code = analyze_cmd.exit_code(analyse(run), parse_events(run.events), result, AnalyzeOptions(script=tmp_path / "s.py"), Console(file=out, width=400))
    assert code == ExitCode.SCRIPT
    assert message in out.getvalue()
