"""The validator's pieces on CPU: snapshots put state back, comparisons catch differences."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker.validator import Snapshot, compare_trees, summarise  # noqa: E402


def test_snapshot_restores_tensors_and_the_cpu_generator():
    a, b = torch.zeros(3), torch.ones(2)
    snap = Snapshot.take([a, b, a], cpu_rng=True)
    assert len(snap.tensors) == 2  # one clone per tensor, however often it is named
    first = torch.rand(1)
    a.add_(5)
    b.mul_(0)
    snap.restore()
    assert torch.equal(a, torch.zeros(3)) and torch.equal(b, torch.ones(2))
    assert torch.equal(torch.rand(1), first)  # the generator is where it was


def test_compare_trees_reports_the_worst_leaf():
    expected = {"y": torch.tensor([1.0, 2.0]), "n": 3}
    diffs = compare_trees(expected, {"y": torch.tensor([1.0, 2.5]), "n": 3}, "output")
    summary = summarise(diffs)
    assert summary["match"] is False and summary["max_abs_diff"] == pytest.approx(0.5)
    assert summary["worst"]["path"].startswith("output") and summary["leaves"] == 2
    assert summarise(compare_trees(expected, expected, "output"))["match"] is True
    assert compare_trees([torch.ones(1)], [torch.ones(1), torch.ones(1)], "o")[0]["why"] == "different structure"
