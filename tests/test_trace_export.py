"""--save-trace on recorded H200 runs: Chrome trace JSON that the viewers and the analysis
both read, with the phase ranges, for ``report`` (and the same code path as ``analyze``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app
from launchprof.errors import UsageError
from launchprof.common.trace_tables import gpu_table, launch_api_table, per_call
from launchprof.commands.trace_export import chrome_trace, export_traces
from recorded import DATA, RUNS, load, recorded

runner = CliRunner()
CAPTURED = recorded(["decode_loop", "two_streams_ok", "hidden_sync"])


def kernels_per_call(trace: dict) -> list[int]:
    return [c.kernels for c in per_call(gpu_table(trace), launch_api_table(trace))]


@pytest.mark.parametrize("name", CAPTURED)
def test_folder_gets_every_trace_with_its_phase_range(name: str, tmp_path: Path) -> None:
    run = load(name)
    written = export_traces(run, tmp_path / "traces")
    assert sorted(p.name for p in written) == sorted(f"trace-{w}.json" for w in run.header.traces)
    for path in written:
        what = path.stem.removeprefix("trace-")
        data = json.loads(path.read_text())
        events = data["traceEvents"]
        complete = [e for e in events if e["ph"] == "X"]
        assert complete and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in complete)
        named = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        assert {e["pid"] for e in complete if e.get("cat") in ("kernel", "user_annotation")} <= named
        phase = [e for e in complete if e["name"] == f"launchprof/{what}"]
        calls = [e for e in complete if e["name"].startswith("launchprof/call")]
        assert len(phase) >= 1 and calls
        start, end = min(e["ts"] for e in phase), max(e["ts"] + e["dur"] for e in phase)
        assert all(start <= c["ts"] and c["ts"] + c["dur"] <= end + 1e-6 for c in calls)
        # The analysis reads the exported trace exactly as the stored one.
        assert kernels_per_call(data) == kernels_per_call(run.trace(what))


def test_derived_range_is_marked_and_recorded_one_kept() -> None:
    from launchprof.commands.trace_export import with_phase_range

    run = load(CAPTURED[0])
    # The current worker records the phase range itself: exported as recorded, not derived.
    stored = run.trace("eager")
    recorded_ranges = [e for e in stored["traceEvents"] if e.get("name") == "launchprof/eager"]
    assert recorded_ranges
    exported = [e for e in chrome_trace(run, "eager")["traceEvents"] if e.get("name") == "launchprof/eager"]
    assert exported == recorded_ranges and not any((e.get("args") or {}).get("derived") for e in exported)
    # A trace of an earlier worker has no range: it is drawn over the calls, and marked.
    older = {**stored, "traceEvents": [e for e in stored["traceEvents"] if e.get("name") != "launchprof/eager"]}
    derived = [e for e in with_phase_range(older, "eager")["traceEvents"] if e.get("name") == "launchprof/eager"]
    calls = [e for e in older["traceEvents"] if str(e.get("name", "")).startswith("launchprof/call")]
    assert len(derived) == 1 and derived[0]["args"] == {"derived": True}
    assert derived[0]["ts"] == min(c["ts"] for c in calls)
    assert derived[0]["ts"] + derived[0]["dur"] == pytest.approx(max(c["ts"] + c["dur"] for c in calls))
    # One recorded range, however small, is kept as it is.
    older["traceEvents"].append({"ph": "X", "cat": "user_annotation", "name": "launchprof/eager", "pid": 0, "tid": 1, "ts": 0.0, "dur": 1.0})
    again = [e for e in with_phase_range(older, "eager")["traceEvents"] if e.get("name") == "launchprof/eager"]
    assert len(again) == 1 and "args" not in again[0]


def test_compact_traces_get_process_and_stream_names() -> None:
    from launchprof.commands.trace_export import with_names

    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 1.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0, "tid": 123, "ts": 0.0, "dur": 1.0},
    ]}
    meta = [e for e in with_names(trace, "eager")["traceEvents"] if e["ph"] == "M"]
    assert {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "CUDA stream 7"}} in meta
    assert [e["args"]["name"] for e in meta if e["name"] == "process_name"] == ["launchprof eager: host and GPU"]


def test_json_file_path_keeps_the_eager_trace(tmp_path: Path) -> None:
    run = load(CAPTURED[0])
    out = tmp_path / "eager.json"
    assert export_traces(run, out) == [out]
    assert kernels_per_call(json.loads(out.read_text())) == kernels_per_call(run.trace("eager"))


def test_bad_destinations_are_usage_errors(tmp_path: Path) -> None:
    run = load(CAPTURED[0])
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        export_traces(run, tmp_path / "afile")
    with pytest.raises(UsageError, match="does not exist"):
        export_traces(run, tmp_path / "no" / "such")


def test_report_save_trace(tmp_path: Path) -> None:
    run_file = RUNS / f"{CAPTURED[0]}.lprun"
    result = runner.invoke(app, ["report", str(run_file), "-f", "json", "-o", str(tmp_path / "r.json"), "--save-trace", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["trace-eager.json", "trace-replay.json"]
    for name in ("trace-eager.json", "trace-replay.json"):  # it says what it wrote, as -o does
        assert f"wrote trace to {tmp_path / 't' / name}\n" in result.output


def test_report_save_trace_needs_a_run_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(DATA / "decode_loop.report.json"), "--save-trace", str(tmp_path / "t")])
    assert result.exit_code == 2
    assert "needs a run file" in result.output and "Traceback" not in result.output


def test_analyze_checks_save_trace_before_the_environment(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    (tmp_path / "afile").write_text("x")
    result = runner.invoke(app, ["analyze", str(script), "--save-trace", str(tmp_path / "afile")])
    assert result.exit_code == 2
    assert "--save-trace" in result.output and "is a file" in result.output
