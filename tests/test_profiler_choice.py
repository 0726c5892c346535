"""Whether the worker runs torch.profiler (worker/profiler_choice.py), how analyze's options
reach that choice (--kernels, --save-trace), the events that record it, and --save-trace on a
run recorded without the profiler."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.cli import app
from launchprof.commands import analyze
from launchprof.errors import UsageError
from launchprof.run import load_run
from launchprof.run.evidence import parse_events
from launchprof.run.file import write_run
from launchprof.worker import profiler_choice
from launchprof.worker.config import WorkerConfig
from launchprof.worker.profiler_choice import reason_to_profile
from recorded import load, load_evidence

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def config(**fields) -> WorkerConfig:
    return WorkerConfig(**{"script": "s.py", "script_args": [], "target": "step", "events_path": "e.jsonl", "trace_path": "t.json", **fields})


@pytest.fixture
def bindings(monkeypatch):
    """Which of the cuda.bindings modules import here (by name)."""
    present: set[str] = {"cuda.bindings.runtime", "cuda.bindings.driver"}
    monkeypatch.setattr(profiler_choice, "_found", lambda name: name in present)
    return present


def test_nothing_needs_the_profiler_for_a_named_target_with_the_bindings(bindings):
    assert reason_to_profile(config()) is None
    assert reason_to_profile(config(profiler="auto")) is None


def test_each_reason_to_profile_from_the_start(bindings):
    assert reason_to_profile(config(profiler="kernels")) == "kernels"
    assert reason_to_profile(config(profiler="save-trace")) == "save-trace"
    assert reason_to_profile(config(ranks=2)) == "ranks"
    assert reason_to_profile(config(compare=("compile",))) == "compare-compile"
    assert reason_to_profile(config(target=None)) == "overview"  # decorated, after the whole-script profile


def test_the_graph_needs_both_the_runtime_and_the_driver_bindings(bindings):
    bindings.discard("cuda.bindings.driver")
    assert reason_to_profile(config()) == "no-cuda-bindings"
    bindings.add("cuda.bindings.driver")
    bindings.discard("cuda.bindings.runtime")
    assert reason_to_profile(config()) == "no-cuda-bindings"
    bindings.add("cuda.cudart")  # the older cuda-python layout graphinfo also reads
    assert reason_to_profile(config()) is None
    assert reason_to_profile(config(profiler="kernels")) == "kernels"  # asked for: said as such


def test_a_missing_parent_package_counts_as_absent():
    """find_spec imports the parent package: a missing one raises, which means absent."""
    assert profiler_choice._found("launchprof_no_such_pkg.sub") is False
    assert profiler_choice._found("json.decoder") is True
    assert "launchprof_no_such_pkg" not in sys.modules


class _Seen(UsageError):
    pass


@pytest.mark.parametrize(
    ("flags", "expected"),
    [([], "auto"), (["--kernels"], "kernels"), (["--save-trace", "{tmp}/traces"], "save-trace"), (["--kernels", "--save-trace", "{tmp}/t"], "kernels")],
)
def test_analyze_options_reach_the_worker_config(tmp_path: Path, monkeypatch, flags: list[str], expected: str) -> None:
    """The command line, through AnalyzeOptions, to the config file the worker reads."""
    seen: list[WorkerConfig] = []

    def fake_worker(cfg: WorkerConfig, rundir: Path, *args, **kwargs):
        cfg.to_file(tmp_path / "c.json")
        seen.append(WorkerConfig.from_file(tmp_path / "c.json"))
        raise _Seen("seen")

    monkeypatch.setattr(analyze, "run_worker", fake_worker)
    args = [f.format(tmp=tmp_path) for f in flags]
    result = runner.invoke(app, ["analyze", str(ROOT / "sample_models" / "decode_loop.py"), "--target", "step", "-q", *args])
    assert result.exit_code == 2 and "seen" in result.output, result.output
    assert [c.profiler for c in seen] == [expected]


def test_the_worker_config_defaults_to_the_automatic_choice() -> None:
    assert config().profiler == "auto"  # the in-process API builds its config without a choice


def test_kernels_is_in_analyze_help() -> None:
    result = runner.invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--kernels" in result.output and "torch.profiler" in " ".join(result.output.split())


# ---------------------------------------------------------------- events and trace export
def _without_profiler(tmp_path: Path) -> Path:
    """A recorded run as the worker writes it without the profiler: no trace events, the
    profiler-plan and op-sequence events instead."""
    run = load("decode_loop")
    events = [e for e in run.events if e["type"] != "trace"]
    at = next(i for i, e in enumerate(events) if e["type"] == "call")
    added = [
        {"type": "profiler-plan", "t": 0.0, "profiled": False, "reason": None, "when": "start"},
        {"type": "op-sequence", "t": 0.0, "index": 13, "count": 40, "digest": "a" * 40},
        {"type": "op-sequence", "t": 0.0, "index": 14, "count": 41, "digest": "b" * 40},
    ]
    return write_run(run.header, events[:at] + added + events[at:], {}, tmp_path / "noprof.lprun", sources={})


def test_the_events_are_gathered_and_old_runs_have_none(tmp_path: Path) -> None:
    evidence = parse_events(load_run(_without_profiler(tmp_path)).events)
    assert [(p.profiled, p.reason, p.when) for p in evidence.profiler_plan] == [(False, None, "start")]
    assert [(o.index, o.count, o.digest) for o in evidence.op_sequences] == [(13, 40, "a" * 40), (14, 41, "b" * 40)]
    assert not evidence.traces
    old = load_evidence("decode_loop")
    assert old.profiler_plan == [] and old.op_sequences == [] and "eager" in old.traces


def test_save_trace_on_a_run_without_the_profiler_is_a_one_line_usage_error(tmp_path: Path) -> None:
    path = _without_profiler(tmp_path)
    from launchprof.commands.trace_export import export_traces

    with pytest.raises(UsageError, match="recorded without the profiler: analyze again with --kernels or --save-trace"):
        export_traces(load_run(path), tmp_path / "t")
    result = runner.invoke(app, ["report", str(path), "-f", "json", "-o", str(tmp_path / "r.json"), "--save-trace", str(tmp_path / "t")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "recorded without the profiler" in lines[0], result.output
    assert not (tmp_path / "t").exists()


def test_save_trace_on_a_profiled_run_is_unchanged(tmp_path: Path) -> None:
    """A run whose profiler-plan says profiled, and an old run, export as before."""
    from launchprof.commands.trace_export import export_traces

    run = load("decode_loop")
    assert export_traces(run, tmp_path / "old")
    events = [{"type": "profiler-plan", "t": 0.0, "profiled": True, "reason": "kernels", "when": "start"}, *run.events]
    marked = load_run(write_run(run.header, events, {}, tmp_path / "k.lprun", sources={}))
    assert export_traces(marked, tmp_path / "k") == []  # no trace stored, but the worker did not skip it
