"""How the measurement wrapper treats exceptions (CPU: the state machine's dispatch is
replaced, the guard around it is the real one)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker.config import WorkerConfig  # noqa: E402
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.plan import Phase, TargetRun  # noqa: E402


def make_run(tmp_path, fn):
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path=str(tmp_path / "t.json"))
    return TargetRun(fn, "f", config, EventWriter(config.events_path))


def events(tmp_path):
    return [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]


def test_user_exception_passes_through_unchanged(tmp_path):
    def fn(x):
        raise KeyError("user's bug")

    run = make_run(tmp_path, fn)
    run._step = lambda args, kwargs: run._user(*args, **kwargs)
    with pytest.raises(KeyError, match="user's bug"):
        run(1)
    assert not [e for e in events(tmp_path) if e["type"] == "internal-error"]


def test_internal_error_is_reported_and_the_call_still_runs(tmp_path):
    run = make_run(tmp_path, lambda x: x + 1)

    def broken(args, kwargs):
        raise AttributeError("launchprof bug")

    run._step = broken
    assert run(41) == 42  # the user's function ran as if launchprof were absent
    kinds = [e["type"] for e in events(tmp_path)]
    assert "internal-error" in kinds and "plan-end" in kinds
    assert run.phase is Phase.DONE
    assert run(1) == 2  # and later calls pass straight through


def test_device_error_surfacing_in_launchprof_code_is_the_users(tmp_path):
    run = make_run(tmp_path, lambda x: x)

    def sync_reports_assert(args, kwargs):
        raise RuntimeError("CUDA error: device-side assert triggered")

    run._step = sync_reports_assert
    with pytest.raises(RuntimeError, match="device-side assert"):
        run(1)
    assert not [e for e in events(tmp_path) if e["type"] == "internal-error"]


def test_keyword_order_is_canonical(tmp_path):
    def f(a, b):
        return a + b

    run = make_run(tmp_path, f)
    x, y = torch.ones(1), torch.zeros(1)
    assert run._canon((), {"a": x, "b": y}) == run._canon((), {"b": y, "a": x}) == (x, y)
    assert run._canon((x, y), {}) == (x, y)


def test_static_inputs_keep_stable_tensors_and_copy_fresh_ones(tmp_path):
    run = make_run(tmp_path, lambda a, b: a + b)
    stable, fresh = torch.ones(2), torch.zeros(2)
    run.inputs.moved_args = {"[1]"}  # the second argument was a new tensor on earlier calls
    static_args, static_kwargs = run.inputs.make((stable, fresh), {})
    assert static_args[0] is stable
    assert static_args[1] is not fresh and torch.equal(static_args[1], fresh)


def test_host_state_is_put_back():
    from launchprof.worker.hoststate import HostState

    class Stepper:
        pos = 0

    namespace = {"calls": 3}
    history = [1, 2]
    stepper = Stepper()
    stepper.pos = 7
    saved = HostState.save([(namespace, "calls"), (stepper, "pos"), (namespace, "later")], [history, history])
    namespace["calls"] += 3
    namespace["later"] = 1
    stepper.pos += 3
    history.extend([3, 4, 5])
    saved.restore()
    assert namespace == {"calls": 3} and stepper.pos == 7 and history == [1, 2]
