"""The op sequence of one call (worker/op_sequence.py) on CPU, and the graph's node types
counted before a graph too large to write out loses its nodes (worker/graphinfo.py)."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker import graphinfo  # noqa: E402
from launchprof.worker.op_sequence import digest_of, recorded_call  # noqa: E402


def test_the_call_runs_once_and_returns_its_own_result():
    calls = []

    def step(x, scale=1.0):
        calls.append(1)
        return x * scale + 1

    x = torch.arange(4.0)
    out, ops = recorded_call(step, (x,), {"scale": 3.0})
    assert len(calls) == 1 and out.equal(x * 3.0 + 1)
    assert ops.count == 2 and ops.digest == digest_of(["aten.mul.Tensor", "aten.add.Tensor"])
    assert ops.digest == hashlib.sha1(b"aten.mul.Tensor\naten.add.Tensor").hexdigest()
    event = ops.event(7)
    assert (event.TYPE, event.index, event.count, event.digest) == ("op-sequence", 7, 2, ops.digest)


def test_another_branch_is_another_digest_and_the_same_branch_the_same():
    def step(x, flag):
        return x.sin() if flag else x.cos()

    x = torch.ones(3)
    first, second, third = (recorded_call(step, (x, f), {})[1] for f in (True, False, True))
    assert first == third and first.digest != second.digest and first.count == second.count


def test_the_backward_ops_are_recorded():
    w = torch.ones(3, requires_grad=True)

    def train(x):
        loss = (w * x).sum()
        loss.backward()
        return loss

    _, forward_only = recorded_call(lambda x: (w * x).sum(), (torch.ones(3),), {})
    _, with_backward = recorded_call(train, (torch.ones(3),), {})
    assert with_backward.count > forward_only.count and w.grad is not None


def test_the_users_exception_passes_through_unchanged_and_the_mode_is_left():
    class StepError(Exception):
        pass

    def step(x):
        x.add_(1)
        raise StepError("from the step")

    x = torch.zeros(2)
    with pytest.raises(StepError, match="from the step"):
        recorded_call(step, (x,), {})
    assert x.tolist() == [1.0, 1.0]  # ran once
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    assert _get_current_dispatch_mode() is None


# ---------------------------------------------------------------- graph node types
class _Kind:
    def __init__(self, name: str) -> None:
        self.name = name


def _fake_runtime(types: list[str]) -> SimpleNamespace:
    """The few cudart calls graph_anatomy makes, over a graph of ``types`` nodes."""

    def get_nodes(graph, count):
        return (0, list(range(len(types))) if count else None, len(types))

    return SimpleNamespace(
        cudaGraph_t=lambda init_value: init_value,
        cudaGraphGetNodes=get_nodes,
        cudaGraphNodeGetType=lambda node: (0, _Kind(f"cudaGraphNodeType{types[node].capitalize()}")),
        cudaGraphGetEdges=lambda graph, count: (0, [], [], 0),
    )


def test_a_graph_too_large_to_write_out_keeps_its_node_type_counts(monkeypatch):
    types = ["kernel"] * 5 + ["memcpy"] * 2 + ["memset"]
    monkeypatch.setattr(graphinfo, "_runtime", lambda: _fake_runtime(types))
    monkeypatch.setattr(graphinfo, "MAX_NODES", 4)
    anatomy, problem = graphinfo.graph_anatomy(123)
    assert anatomy is not None and anatomy["nodes"] == [] and "8 nodes" in (problem or "")
    assert graphinfo.counts_of(anatomy) == (8, {"kernel": 5, "memcpy": 2, "memset": 1})


def test_node_types_are_counted_from_nodes_where_no_count_was_kept():
    """An anatomy without ``types`` (built elsewhere) is counted from its nodes."""
    anatomy = {"node_count": 3, "nodes": [{"type": "kernel"}, {"type": "kernel"}, {"type": "memset"}], "edges": []}
    assert graphinfo.counts_of(anatomy) == (3, {"kernel": 2, "memset": 1})
    assert graphinfo.counts_of(None) == (None, {})
