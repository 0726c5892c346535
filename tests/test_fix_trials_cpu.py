"""The worker's fix trial end to end on CPU, with the CUDA calls faked: a stand-in graph
whose replay runs the captured (patched) call on the static buffers and copies its result
into the captured output, as a graph does. What this checks is launchprof's own part: the
fix's function found, patched and put back, the eager reference run with the original, the
comparison, the timing and the event. tests/test_gpu_fix_trials.py runs it on a GPU."""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from launchprof.model.findings import FixCode  # noqa: E402
from launchprof.model.hazard_records import Fix  # noqa: E402

SOURCE = '''\
import torch


def scaled(h):
    s = h.abs().mean().item()
    return h * s


def step(x, w):
    h = x @ w
    return scaled(h) + 1.0


def branchy(x, w):
    h = torch.tanh(x @ w)
    if h.mean() > 0:
        return h * 2.0
    else:
        return h - 1.0
'''


class FakeGraph:
    """Replays the captured call: runs it on the static buffers and copies into its output."""

    current: FakeGraph | None = None

    def __init__(self, *args, **kwargs) -> None:
        self.call = None

    def replay(self) -> None:
        fn, args, kwargs, out = self.call
        with torch.no_grad():
            out.copy_(fn(*args, **kwargs))


class Recording:
    """``torch.cuda.graph``: the call made inside is what the graph replays; a ``.item()`` fails."""

    def __init__(self, graph: FakeGraph, **kwargs) -> None:
        self.graph = graph

    def __enter__(self):
        FakeGraph.current = self.graph
        return self

    def __exit__(self, *exc) -> None:
        FakeGraph.current = None


def fake_capture(call, args, kwargs, reset):
    for _ in range(2):
        call(*args, **kwargs)
    reset()
    graph = FakeGraph()
    original_item = torch.Tensor.item

    def no_item(self):
        raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

    torch.Tensor.item = no_item
    torch.Tensor.__bool__ = no_item
    try:
        out = call(*args, **kwargs)
    finally:
        torch.Tensor.item = original_item
        del torch.Tensor.__bool__
    graph.call = (call, args, kwargs, out)
    return graph, out


def cpu_timed(fn):
    from launchprof.worker.call_timer import Timed

    t0 = time.perf_counter()
    out = fn()
    return out, Timed(wall_us=(time.perf_counter() - t0) * 1e6, gpu_us=0.0)


@pytest.fixture
def cpu_cuda(monkeypatch):
    from launchprof.worker import fix_trial_run, fix_trials, plan_bursts, validator

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(fix_trial_run, "_capture", fake_capture)
    monkeypatch.setattr(fix_trial_run, "timed", cpu_timed)
    monkeypatch.setattr(validator, "timed", cpu_timed)
    monkeypatch.setattr(validator, "cuda_rng_state", lambda: None)
    return fix_trials


@pytest.fixture
def user(tmp_path):
    path = tmp_path / "user_trial_code.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("user_trial_code", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), start=1) if line.strip() == text)


def target_run(tmp_path: Path, fn):
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.event_writer import EventWriter
    from launchprof.worker.plan import TargetRun

    log = tmp_path / "events.jsonl"
    log.write_text("", encoding="utf-8")
    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(log), trace_path=str(tmp_path / "t"))
    run = TargetRun(fn, "step", config, EventWriter(str(log)))
    torch.manual_seed(0)
    w = torch.randn(8, 8)
    run.eager_sets = collections.deque([((torch.randn(4, 8), w), {}) for _ in range(3)], maxlen=4)
    for args, kwargs in run.eager_sets:  # as the script's calls were observed: a new `x` each call, the same `w`
        run.inputs.observe(args, kwargs)
    return run, log


def trials(monkeypatch, cpu_cuda, run, log, fixes):
    from launchprof.hazards.fixes import fixes_to_try as module

    monkeypatch.setattr(module, "fixes_to_try", lambda events: fixes)
    cpu_cuda.try_fixes(run)
    return [json.loads(line) for line in log.read_text().splitlines() if '"fix-trial"' in line]


def test_a_fix_in_a_callee_is_captured_compared_and_timed(tmp_path, monkeypatch, cpu_cuda, user):
    run, log = target_run(tmp_path, user.step)
    line = line_of("s = h.abs().mean().item()")
    good = Fix(before="s = h.abs().mean().item()", after="s = h.abs().mean()", note="", file=user.__file__, line=line, indent="    ", code=FixCode.KEEP_ON_DEVICE.value)
    original = user.scaled
    (event,) = trials(monkeypatch, cpu_cuda, run, log, [("hidden-sync", good), ("hidden-sync", good)])  # one trial per distinct fix
    assert user.scaled is original  # put back
    assert event["function"] == "scaled"
    assert (event["verified"], event["captured"], event["calls_compared"], event["matches"], event["reason"]) == (True, True, 3, 3, "")
    assert event["replay_step_us"] > 0 and event["eager_step_us"] > 0 and event["speedup"] > 0


def test_a_fix_that_still_reads_the_host_does_not_capture(tmp_path, monkeypatch, cpu_cuda, user):
    run, log = target_run(tmp_path, user.step)
    line = line_of("return h * s")
    wrong = Fix(before="return h * s", after="return h * float(s)", note="", file=user.__file__, line=line, indent="    ", code=FixCode.KEEP_ON_DEVICE.value)
    (event,) = trials(monkeypatch, cpu_cuda, run, log, [("hidden-sync", wrong)])
    assert (event["verified"], event["captured"], event["reason"]) == (False, False, "did-not-capture")
    assert "operation not permitted" in event["error"]


def test_a_fix_that_changes_results_fails_on_the_comparison(tmp_path, monkeypatch, cpu_cuda, user):
    run, log = target_run(tmp_path, user.branchy)
    first = line_of("if h.mean() > 0:")
    before = "if h.mean() > 0:\n    return h * 2.0\nelse:\n    return h - 1.0"
    right = Fix(before=before, after="return torch.where(h.mean() > 0, h * 2.0, h - 1.0)", note="", file=user.__file__, line=first, indent="    ", code=FixCode.WHERE_SELECT.value)
    wrong = Fix(before=before, after="return torch.where(h.mean() > 0, h * 3.0, h - 1.0)", note="", file=user.__file__, line=first, indent="    ", code=FixCode.WHERE_SELECT.value)
    events = trials(monkeypatch, cpu_cuda, run, log, [("data-dependent-control-flow", right), ("data-dependent-control-flow", wrong)])
    by_after = {e["after"]: e for e in events}
    ok, bad = by_after[right.after], by_after[wrong.after]
    assert (ok["verified"], ok["matches"], ok["calls_compared"], ok["function"]) == (True, 3, 3, "branchy")
    assert bad["verified"] is False and bad["reason"] == "replay-differs" and bad["captured"] is True
    assert bad["matches"] < bad["calls_compared"] == 3


def test_a_fix_out_of_budget_is_not_tried(tmp_path, monkeypatch, cpu_cuda, user):
    run, log = target_run(tmp_path, user.step)
    monkeypatch.setattr(cpu_cuda, "BUDGET_S", 0.0)
    line = line_of("s = h.abs().mean().item()")
    good = Fix(before="s = h.abs().mean().item()", after="s = h.abs().mean()", note="", file=user.__file__, line=line, indent="    ", code=FixCode.KEEP_ON_DEVICE.value)
    (event,) = trials(monkeypatch, cpu_cuda, run, log, [("hidden-sync", good)])
    assert (event["verified"], event["reason"]) == (None, "budget")
