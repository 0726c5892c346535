"""Mutation detection in the warm-up calls (worker/plan.py, worker/saved_state.py) on CPU:
tensors made under ``torch.inference_mode()`` have no version counter, so their contents
decide. An ``nn.Module`` target under inference mode that only reads its input is not
reported as changing it; a real in-place write under inference mode still is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker.config import WorkerConfig  # noqa: E402
from launchprof.worker.event_writer import EventWriter  # noqa: E402
from launchprof.worker.plan import TargetRun  # noqa: E402
from launchprof.worker.saved_state import changed_tensors, version_marked  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("scale", torch.ones(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)) * self.scale


def _warm_up(tmp_path: Path, fn, make_input, calls: int = 3) -> list[str]:
    """The argument paths the warm-up calls' mutations event names."""
    path = tmp_path / "e.jsonl"
    cfg = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(path), trace_path="", warmup=calls)
    run = TargetRun(fn, "f", cfg, EventWriter(cfg.events_path))
    with torch.inference_mode():
        for _ in range(calls):
            run(*make_input())
    run.events.close()
    found = [json.loads(line) for line in path.read_text().splitlines()]
    return next(e for e in found if e["type"] == "mutations")["args"]


def test_a_module_target_under_inference_mode_does_not_change_its_input(tmp_path):
    model = Net()
    assert _warm_up(tmp_path, model.forward, lambda: (torch.randn(4, 8),)) == []


def test_torchs_own_module_whose_forward_takes_input_is_clean_too(tmp_path):
    """``--target model`` on an ``nn.Sequential``: its ``forward(self, input)`` named the
    argument `input` in the H200 report's false warning."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    assert _warm_up(tmp_path, model.forward, lambda: (torch.randn(4, 8),)) == []


def test_a_forward_hooked_on_the_class_sees_self_and_is_still_clean(tmp_path):
    model = Net()
    assert _warm_up(tmp_path, Net.forward, lambda: (model, torch.randn(4, 8))) == []


def test_a_real_in_place_write_under_inference_mode_is_still_found(tmp_path):
    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.mul_(2.0)
        return x + y

    assert _warm_up(tmp_path, step, lambda: (torch.randn(16), torch.randn(16))) == ["[0]"]


def test_an_in_place_write_that_leaves_the_same_bits_is_not_a_change():
    with torch.inference_mode():
        t = torch.arange(6.0)
        before = version_marked([("t", t)])
        t.mul_(1.0)
        assert changed_tensors(before) == []
        t[3] = -1.0
        assert changed_tensors(before) == ["t"]


def test_a_tensor_with_a_version_counter_is_not_checksummed_and_is_judged_by_it():
    t = torch.zeros(4)
    marks = version_marked([("t", t)])
    assert marks[0][2].sum is None and marks[0][2].version == t._version
    t.add_(0.0)  # same bits, but the counter moved: a write
    assert changed_tensors(marks) == ["t"]


def test_an_inference_tensor_without_a_checksum_still_counts_as_changed():
    """No counter and no checksum (a sparse tensor): nothing says it stayed, so it is saved."""
    with torch.inference_mode():
        t = torch.zeros(3, 3).to_sparse()
    marks = version_marked([("t", t)])
    assert marks[0][2].version is None and marks[0][2].sum is None
    assert changed_tensors(marks) == ["t"]
