"""The plan without torch.profiler (worker/profiler_choice.py), driven on CPU with the GPU
parts faked as in tests/test_plan_machine.py: the profile phase records op sequences and
writes no trace; the recorded eager calls are profiled after the plan only where no graph was
captured or the op sequences differ, on a snapshot that is put back, after everything timed."""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker import plan, plan_profiles  # noqa: E402
from launchprof.worker.burst import BURST_SETS  # noqa: E402
from launchprof.worker.capture import CaptureFailed  # noqa: E402
from launchprof.worker.op_sequence import digest_of  # noqa: E402
from launchprof.worker.plan_phases import FINISH_REASONS, Exit, Phase  # noqa: E402
from tests.test_plan_machine import events, fake_gpu, make_run  # noqa: E402,F401 - the shared fixture


@pytest.fixture
def no_reason(monkeypatch):
    """A GPU host with cuda.bindings and nothing that asks for the profiler."""
    monkeypatch.setattr(plan, "reason_to_profile", lambda config: None)


@pytest.fixture
def failing_capture(monkeypatch):
    def capture(fn, static_args, static_kwargs, warmup, before_capture):
        raise CaptureFailed({"message": "operation not permitted when stream is capturing"})

    monkeypatch.setattr(plan, "capture", capture)
    monkeypatch.setattr(plan, "after_failed_capture", lambda run, info, index, snap, retry, call: None)


def drive(run, make_args=lambda i: (torch.ones(4) * i,), limit: int = 100) -> int:
    calls = 0
    while run.phase is not Phase.DONE and calls < limit:
        run(*make_args(calls))
        calls += 1
    run.events.close()
    return calls


class Ran:
    """Counts the step's calls in a file: the snapshot the plan puts back covers every Python
    object the step can reach, a counter in a list included."""

    def __init__(self, tmp: Path) -> None:
        self.path = str(tmp / "ran.txt")

    def once(self) -> None:
        with open(self.path, "a") as fh:
            fh.write("x")

    def count(self) -> int:
        with open(self.path) as fh:
            return len(fh.read())


def of_type(log: list[dict], kind: str) -> list[dict]:
    return [e for e in log if e["type"] == kind]


def plans(log: list[dict]) -> list[tuple]:
    return [(e["profiled"], e["reason"], e["when"]) for e in of_type(log, "profiler-plan")]


def test_without_a_reason_the_profile_phase_records_op_sequences_and_no_trace(tmp_path, fake_gpu, no_reason):
    run = make_run(tmp_path, repeat=10)
    drive(run)
    log = events(tmp_path)
    assert [e["name"] for e in of_type(log, "phase")] == ["eager", "profile", "probe", "capture", "replay"]
    assert of_type(log, "plan-end")[0]["reason"] == FINISH_REASONS[Exit.COMPLETE]
    assert plans(log) == [(False, None, "start")]
    assert not of_type(log, "trace") and not run.profiled_replay  # neither the eager calls nor a replay
    profile_calls = [e["index"] for e in of_type(log, "call") if e["phase"] == "profile"]
    ops = of_type(log, "op-sequence")
    assert [e["index"] for e in ops] == profile_calls and len(ops) == run.config.profile_calls
    # x * 2: one op per call, the same on every call
    assert {(e["count"], e["digest"]) for e in ops} == {(1, digest_of(["aten.mul.Tensor"]))}


def test_the_first_call_says_why_the_plan_profiles(tmp_path, fake_gpu):
    run = make_run(tmp_path, repeat=10, profiler="kernels")
    drive(run)
    log = events(tmp_path)
    assert plans(log) == [(True, "kernels", "start")]
    assert not of_type(log, "op-sequence")
    assert [t["what"] for t in of_type(log, "trace")] == ["eager"] and run.profiled_replay


def _alternating(x):
    """Another op on every other call: the calls take different paths through the step."""
    return x * 2 if int(x[0]) % 2 else x + x


def test_differing_op_sequences_profile_the_eager_calls_after_everything_timed(tmp_path, fake_gpu, no_reason):
    run = make_run(tmp_path, fn=_alternating, repeat=10)
    drive(run)
    log = events(tmp_path)
    assert len({e["digest"] for e in of_type(log, "op-sequence")}) == 2
    assert plans(log) == [(False, None, "start"), (True, "ops-differ", "after-plan")]
    traces = of_type(log, "trace")
    assert [(t["what"], t["calls"], t["may_be_lost"]) for t in traces] == [("eager", BURST_SETS, False)]
    order = [e.get("text") or e["type"] for e in log]
    assert order.index("bursts") < order.index("trace") < order.index("plan-end")
    assert not run.profiled_replay


def test_same_ops_and_a_graph_need_no_profile_after_the_plan(tmp_path, fake_gpu, no_reason):
    run = make_run(tmp_path, repeat=10)
    drive(run)
    assert plans(events(tmp_path)) == [(False, None, "start")]


def test_a_failed_capture_profiles_the_recorded_eager_calls_on_a_snapshot(tmp_path, fake_gpu, no_reason, failing_capture):
    """The step adds to its argument in place: the late profile's extra calls run on each
    recorded set, and each tensor the script passed is left as the script's own call left it."""
    ran = Ran(tmp_path)

    def step(x):
        ran.once()
        x.add_(1)
        return x * 2

    passed = []

    def args(i):
        passed.append(torch.full((4,), float(i)))
        return (passed[-1],)

    run = make_run(tmp_path, fn=step, repeat=10)
    calls = drive(run, args)
    log = events(tmp_path)
    assert of_type(log, "plan-end")[0]["reason"] == FINISH_REASONS[Exit.CAPTURE_FAILED]
    assert plans(log) == [(False, None, "start"), (True, "capture-failed", "after-plan")]
    assert [(t["what"], t["calls"]) for t in of_type(log, "trace")] == [("eager", BURST_SETS)]
    assert ran.count() == calls + BURST_SETS  # the script's calls, then one profiled call per set
    assert [float(t[0]) for t in passed] == [i + 1.0 for i in range(calls)]  # each changed once, by its own call
    assert not [e for e in of_type(log, "note") if e.get("code") == "state-lost"]


def test_profiling_from_the_start_takes_no_second_profile_when_capture_fails(tmp_path, fake_gpu, failing_capture):
    run = make_run(tmp_path, repeat=10, profiler="kernels")
    drive(run)
    log = events(tmp_path)
    assert plans(log) == [(True, "kernels", "start")]
    assert [t["what"] for t in of_type(log, "trace")] == ["eager"]


def test_a_plan_closed_before_capture_profiles_its_eager_calls_as_no_graph(tmp_path, fake_gpu, no_reason):
    run = make_run(tmp_path, repeat=10)
    while run.phase is not Phase.PROBE:
        run(torch.ones(4))
    run.finish(reason="the script ended before the measurement plan completed")
    run.events.close()
    log = events(tmp_path)
    assert plans(log) == [(False, None, "start"), (True, "no-graph", "after-plan")]
    assert [t["calls"] for t in of_type(log, "trace")] == [BURST_SETS]


def test_a_plan_that_ends_in_its_warm_up_has_no_eager_calls_to_profile(tmp_path, fake_gpu, no_reason):
    run = make_run(tmp_path, repeat=10)
    run(torch.ones(4))
    run.finish(reason="the script ended before the measurement plan completed")
    run.events.close()
    log = events(tmp_path)
    assert plans(log) == [(False, None, "start")] and not of_type(log, "trace")


def test_a_lost_late_session_is_taken_once_more(tmp_path, fake_gpu, no_reason, failing_capture):
    fake_gpu.extend([True, True])  # the first late session and its retake: both empty
    ran = Ran(tmp_path)
    run = make_run(tmp_path, fn=lambda x: ran.once() or x * 2, repeat=10)
    calls = drive(run)
    log = events(tmp_path)
    assert ran.count() == calls + 2 * BURST_SETS
    assert [e.get("code") for e in of_type(log, "note")].count("reprofiled") == 1
    # empty after the retake: a step with no GPU work, not a lost trace
    assert [(t["calls"], t["may_be_lost"]) for t in of_type(log, "trace")] == [(BURST_SETS, False)]


def test_a_failing_late_profile_is_a_note_and_never_reaches_the_script(tmp_path, fake_gpu, no_reason, failing_capture, monkeypatch):
    state = {"fail": False}

    def step(x):
        if state["fail"]:
            raise ValueError("the step broke")
        return x * 2

    @contextlib.contextmanager
    def failing():  # the late profile's calls alone fail
        state["fail"] = True
        try:
            yield
        finally:
            state["fail"] = False

    monkeypatch.setattr(plan_profiles, "silenced", failing)
    run = make_run(tmp_path, fn=step, repeat=10)
    drive(run)  # no exception
    log = events(tmp_path)
    notes = [e for e in of_type(log, "note") if e.get("code") == "trace-not-written"]
    assert len(notes) == 1 and "ValueError: the step broke" in notes[0]["params"]["error"]
    assert plans(log) == [(False, None, "start")] and not of_type(log, "trace")
    assert not run.busy


def test_the_late_trace_holds_one_call_window_per_set(tmp_path, fake_gpu, no_reason, failing_capture, monkeypatch):
    """torch's own profiler (CPU activity here) and the trace writer: the analysis joins
    kernels to calls by the ``launchprof/callN`` windows inside ``launchprof/eager``."""
    from launchprof.worker import profiler_tables

    monkeypatch.setattr(plan_profiles, "new_profile", profiler_tables.new_profile)
    monkeypatch.setattr(plan_profiles, "write_table", profiler_tables.write_table)
    run = make_run(tmp_path, repeat=10)
    drive(run)
    log = events(tmp_path)
    (trace,) = of_type(log, "trace")
    rows = json.loads(gzip.decompress((tmp_path / trace["path"]).read_bytes()))["traceEvents"]
    names = [e["name"] for e in rows if e.get("cat") == "user_annotation"]
    assert sorted(n for n in names if n.startswith("launchprof/call")) == [f"launchprof/call{i}" for i in range(BURST_SETS)]
    assert names.count("launchprof/eager") == BURST_SETS


def test_a_graph_that_could_not_be_read_is_profiled_after_the_plan():
    """No node types (cuda-bindings of another signature): the graph gives no kernel count, so
    the eager calls are profiled after the plan."""
    from types import SimpleNamespace

    from launchprof.worker.plan_profiles import late_reason

    run = SimpleNamespace(profiling=None, captured=SimpleNamespace(graph_nodes=None), op_digests=["a", "a", "a"])
    assert late_reason(run, "complete") == "no-graph-nodes"
    run.captured.graph_nodes = 12
    assert late_reason(run, "complete") is None
