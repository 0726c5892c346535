"""CUPTI teardown: the plan's profiler must not slow the bursts timed after it."""

from __future__ import annotations

import json
import os

import pytest

from launchprof.worker.cupti import TEARDOWN_CUPTI, cuda_version, lost_device_activity, tear_down_after_profiling
from tests.notes_said import said


def test_teardown_is_asked_for_when_the_user_did_not_choose(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "")  # recorded, so that what the code sets is undone after
    monkeypatch.delenv(TEARDOWN_CUPTI)
    assert tear_down_after_profiling("13.0") is None
    assert os.environ[TEARDOWN_CUPTI] == "1"


def test_the_users_own_choice_is_kept_and_a_zero_is_noted(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    assert tear_down_after_profiling("13.0") is None
    monkeypatch.setenv(TEARDOWN_CUPTI, "0")  # the user's, or torch inductor's with cudagraphs
    note = tear_down_after_profiling("13.0")
    assert os.environ[TEARDOWN_CUPTI] == "0"
    assert note is not None and "TEARDOWN_CUPTI=0" in note and "read high" in note


def test_before_cuda_12_6_teardown_stays_off_and_the_run_says_why(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "")  # recorded, so that what the code sets is undone after
    monkeypatch.delenv(TEARDOWN_CUPTI)
    note = tear_down_after_profiling("12.4")
    assert TEARDOWN_CUPTI not in os.environ
    assert note is not None and "12.4" in note and "read high" in note
    assert tear_down_after_profiling("12.6") is None and os.environ[TEARDOWN_CUPTI] == "1"


def test_cuda_versions_parse():
    assert cuda_version("12.10") == (12, 10) and cuda_version("13.0") == (13, 0)
    assert cuda_version(None) is None and cuda_version("x") is None


class _Event:
    def __init__(self, device: str) -> None:
        self.device = device

    def device_type(self) -> str:
        return f"DeviceType.{self.device}"


class _Prof:
    """What lost_device_activity reads of a finished torch.profiler session."""

    def __init__(self, *devices: str) -> None:
        results = type("Results", (), {"events": lambda _self: [_Event(d) for d in devices]})()
        self.profiler = type("Inner", (), {"kineto_results": results})()
        self.exited = 0

    def __enter__(self) -> _Prof:
        return self

    def __exit__(self, *exc: object) -> None:
        self.exited += 1


def test_a_session_with_no_gpu_activity_under_teardown_counts_as_lost(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    assert lost_device_activity(_Prof("CPU", "CPU"))
    assert not lost_device_activity(_Prof("CPU", "CUDA"))
    assert not lost_device_activity(object())  # nothing to judge: the trace is kept
    monkeypatch.setenv(TEARDOWN_CUPTI, "0")  # the loss comes with the teardown only
    assert not lost_device_activity(_Prof("CPU"))


def test_the_plan_profiles_its_calls_again_once_after_a_lost_trace(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from launchprof.worker import plan, plan_profiles
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.event_writer import EventWriter

    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    monkeypatch.setattr(plan_profiles, "write_table", lambda prof, run_dir, what: f"trace-{what}.json.gz")
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path=str(tmp_path / "t.json"), profiler="kernels")
    run = plan.TargetRun(lambda: None, "f", config, EventWriter(config.events_path))
    run.profiler = first = _Prof("CPU")
    assert plan_profiles.finish_profile(run) is False and first.exited == 1  # lost: take it again
    run.profiler = second = _Prof("CPU")
    assert plan_profiles.finish_profile(run) is True and second.exited == 1  # a CPU-only step: once is enough
    run.profiler = _Prof("CPU")
    run.reprofiled = False
    assert plan_profiles.finish_profile(run, retry=False) is True  # closing the plan never asks for more calls
    traces = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines() if '"trace"' in line]
    assert len(traces) == 2 and all(t["what"] == "eager" for t in traces)
    # empty after the retake: a step with no GPU work; empty and never retaken: maybe lost
    assert [t["may_be_lost"] for t in traces] == [False, True]


def test_the_profile_phase_takes_its_calls_again_after_a_lost_session(tmp_path, monkeypatch):
    """The plan's own profile phase, driven call by call (torch's profiler replaced by
    sessions that come back lost, then whole): still profiling after the first
    ``profile_calls`` calls, on to the probe after twice as many, one trace of the second
    session's calls, and a note that says why."""
    torch = pytest.importorskip("torch")
    from launchprof.worker import plan, plan_profiles
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.event_writer import EventWriter

    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(plan_profiles, "write_table", lambda prof, run_dir, what: f"trace-{what}.json.gz")
    sessions = iter([_Prof("CPU"), _Prof("CPU", "CUDA")])
    monkeypatch.setattr(plan_profiles, "new_profile", lambda: next(sessions))
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path=str(tmp_path / "t.json"), profiler="kernels")
    run = plan.TargetRun(lambda: None, "f", config, EventWriter(config.events_path))
    run.phase = plan.Phase.PROFILE
    for i in range(config.profile_calls):
        run._profile(i, (), {}, [], {})
    assert run.phase is plan.Phase.PROFILE and run.in_phase == 0
    for i in range(config.profile_calls):
        run._profile(i, (), {}, [], {})
    assert run.phase is plan.Phase.PROBE
    run.events.close()
    events = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    traces = [e for e in events if e["type"] == "trace"]
    assert [(t["what"], t["calls"]) for t in traces] == [("eager", config.profile_calls)]
    assert any(e["type"] == "note" and "profiled again" in said(e) for e in events)


def test_the_compile_comparison_profiles_its_call_again_after_a_lost_session(monkeypatch):
    """The compiled call's kernel count comes from one profiled call: after a lost session
    (no GPU activity under teardown) it is taken once more, and only once."""
    pytest.importorskip("torch")
    from launchprof.worker import compile_compare, profiler_tables

    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    monkeypatch.setattr(compile_compare, "_sync", lambda: None)
    kernel = {"cat": "kernel", "name": "k"}
    launch = {"cat": "cuda_runtime", "name": "cudaGraphLaunch"}
    sessions = [_Prof("CPU"), _Prof("CPU", "CUDA"), _Prof("CPU", "CUDA")]
    monkeypatch.setattr(profiler_tables, "new_profile", lambda: sessions.pop(0))
    monkeypatch.setattr(profiler_tables, "chrome_rows", lambda events, base: [kernel] * sum("CUDA" in e.device for e in events) + [launch])
    calls = []
    result = compile_compare.ModeResult(mode="reduce-overhead", field="compile")
    compile_compare.profile_call(lambda: calls.append(1), (), {}, result)
    assert len(calls) == 2 and len(sessions) == 1  # the lost session, then one more, no third
    assert result.kernels_per_step == 1 and result.cudagraphs_used


def test_a_lost_session_is_written_when_the_script_stops_before_the_retake(tmp_path, monkeypatch):
    """The first session came back empty and was set aside for a retake; the script then
    stopped calling the target. Closing the plan writes the set-aside session, flagged
    ``may_be_lost``, so the report says why the counts are unknown (before, nothing did)."""
    pytest.importorskip("torch")
    from launchprof.worker import plan, plan_profiles
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.event_writer import EventWriter

    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    written = []
    monkeypatch.setattr(plan_profiles, "write_table", lambda prof, run_dir, what: written.append(prof) or f"trace-{what}.json.gz")
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path=str(tmp_path / "t.json"), profiler="kernels")
    run = plan.TargetRun(lambda: None, "f", config, EventWriter(config.events_path))
    run.profiler, run.in_phase = (first := _Prof("CPU")), 3
    assert plan_profiles.finish_profile(run) is False and written == []
    run.in_phase = 0  # the retake would start here, but no call comes
    run.finish(reason="script ended", bursts=False)
    run.events.close()
    traces = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines() if '"trace"' in line]
    assert written == [first] and [(t["calls"], t["may_be_lost"]) for t in traces] == [(3, True)]
