"""The worker's bucket helpers that need no GPU: padding recorded calls, slicing outputs
back, reading the observed shapes, and locating the op where padding leaks (issue 17).

The capture and timing in launchprof/worker/bucket_measure.py run on the GPU only
(tests/test_gpu_buckets.py)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from launchprof.worker.bucket_inputs import (  # noqa: E402
    CallSet,
    Padder,
    derived_set,
    observed_history,
    output_dims,
    padded_set,
    recorded_sets,
    run_pairs,
    sliced,
)
from launchprof.worker.bucket_leak import leaking_ops, locate_leak  # noqa: E402

W = torch.randn(8, 8, generator=torch.Generator().manual_seed(0))


def rowwise(x: torch.Tensor, w: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = torch.nn.functional.layer_norm(x @ w, (8,))
    return h.softmax(dim=-1), lengths * 2


def pooled(x: torch.Tensor, w: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    h = x @ w
    ctx = h.mean(dim=0)  # the leak: a mean over the padded batch
    return h + ctx


def gram(x: torch.Tensor, w: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    return (x + 1).T @ (x + 1)  # contracts the batch: also a leak


AXIS = [("x", 0), ("lengths", 0)]


def call(n: int) -> CallSet:
    return CallSet((torch.randn(n, 8), W, torch.arange(n)), {}, n)


def test_padder_copies_real_rows_and_zeroes_the_padding():
    pad = Padder(rowwise, call(3), AXIS, [], 8)
    assert pad.args[0].shape == (8, 8) and pad.args[1] is W  # the weight is read in place
    c = call(5)
    run_pairs(pad.copy_in(c))
    assert torch.equal(pad.args[0][:5], c.args[0]) and not pad.args[0][5:].any()
    assert torch.equal(pad.args[2][:5], c.args[2]) and not pad.args[2][5:].any()
    c2 = call(2)
    run_pairs(pad.copy_in(c2))  # a smaller call later: old rows are zeroed, not left behind
    assert torch.equal(pad.args[0][:2], c2.args[0]) and not pad.args[0][2:].any()


def test_moved_arguments_get_their_own_buffer():
    base = call(3)
    pad = Padder(rowwise, base, AXIS, ["w"], 4)
    assert pad.args[1] is not W and torch.equal(pad.args[1], W)
    other = CallSet((torch.randn(4, 8), W * 2, torch.arange(4)), {}, 4)
    run_pairs(pad.copy_in(other))
    assert torch.equal(pad.args[1], W * 2)


def test_padded_rowwise_step_sliced_back_equals_the_real_call():
    c = call(5)
    padded = padded_set(rowwise, c, AXIS, 8)
    out8 = rowwise(*padded.args)
    other = rowwise(*padded_set(rowwise, call(2), AXIS, 2).args)
    dims = output_dims(out8, 8, other, 2)
    assert dims == [0, 0]
    got = sliced(out8, dims, 5)
    want = rowwise(*c.args)
    assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(got, want))


def test_output_without_the_padded_dim_is_kept_whole():
    out = (torch.zeros(8, 3), torch.zeros(3))
    assert output_dims(out, 8) == [0, None]
    # a size of 1 is ambiguous alone; another size tells which dimension follows the batch
    assert output_dims((torch.zeros(1, 1),), 1, (torch.zeros(4, 1),), 4) == [0]


def test_derived_call_cuts_or_repeats_recorded_rows():
    base = call(3)
    cut = derived_set(rowwise, base, AXIS, 2)
    assert cut.derived and cut.size == 2 and torch.equal(cut.args[0], base.args[0][:2])
    grown = derived_set(rowwise, base, AXIS, 7)
    assert grown.args[0].shape == (7, 8) and torch.equal(grown.args[0][3:6], base.args[0])
    assert grown.args[1] is W


def test_recorded_sets_read_the_size_of_the_varying_argument():
    sets = [((torch.randn(n, 8), W, torch.arange(n)), {}) for n in (3, 5)]
    got = recorded_sets(rowwise, sets, AXIS)
    assert [c.size for c in got] == [3, 5] and not any(c.derived for c in got)


def test_observed_history_reads_the_call_events(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [{"type": "call", "index": i, "args": [{"path": "x", "kind": "tensor", "shape": [n, 8]}, {"path": "lr", "kind": "scalar", "value": 0.1}]}
             for i, n in enumerate([3, 5, 3])]
    path.write_text("\n".join(json.dumps(e) for e in [{"type": "machine"}, *lines]) + "\n{torn")
    history, calls = observed_history(str(path))
    assert history == {"x": [(3, 8), (5, 8), (3, 8)]} and calls == 3


@pytest.mark.parametrize(("fn", "op", "marker"), [(pooled, "mean", "ctx = h.mean(dim=0)"), (gram, "matmul", "return (x + 1).T @ (x + 1)")])
def test_leak_is_named_at_the_users_line(fn, op, marker):
    c = call(5)
    padded = padded_set(fn, c, AXIS, 8)
    assert not torch.allclose(fn(*padded.args)[:5] if fn is pooled else fn(*padded.args), fn(*c.args))
    [found] = locate_leak(lambda: fn(*c.args), lambda: fn(*padded.args))
    assert found.name == op and found.site is not None
    assert found.site["file"] == __file__
    assert marker in found.site["code"]


def test_rowwise_ops_are_not_leaks():
    c = call(5)
    padded = padded_set(rowwise, c, AXIS, 8)
    assert locate_leak(lambda: rowwise(*c.args), lambda: rowwise(*padded.args)) == []


def test_runs_that_diverge_stop_the_comparison():
    from launchprof.worker.bucket_leak import OpRecord

    a = [OpRecord("softmax", (5, 8), (1,), None), OpRecord("sum", (5, 8), (0,), None)]
    b = [OpRecord("mean", (8, 8), (0,), None), OpRecord("sum", (8, 8), (0,), None)]
    assert leaking_ops(a, b) == []
