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


# --- validation of steps that mutate state (AdamW), on CPU ----------------------------------


def test_a_float_leaf_may_differ_by_one_rounding_step_of_its_type():
    w = torch.tensor([0.05, 1.0, -3.0], dtype=torch.bfloat16)
    one_ulp = (w.view(torch.int16) + 1).view(torch.bfloat16)  # the next value bfloat16 holds
    three_ulp = (w.view(torch.int16) + 3).view(torch.bfloat16)
    assert summarise(compare_trees(w, one_ulp, "state"))["match"] is True
    assert summarise(compare_trees(w, three_ulp, "state"))["match"] is False
    f = torch.tensor([0.05, 1.0])
    assert summarise(compare_trees(f, f * (1 + 1e-3), "state"))["match"] is False  # float32 keeps its tight tolerance


def test_comparing_tensors_that_require_grad_warns_nothing():
    import warnings

    a = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        diffs = compare_trees(a * 2, a * 2 + 1, "output")
    assert diffs[0]["match"] is False and diffs[0]["max_abs_diff"] == pytest.approx(1.0)


def _adamw_case(steps: int):
    """A small MLP trained ``steps`` AdamW steps on one batch; (model, opt, step(perm))."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

    def step(perm=None):
        opt.zero_grad(set_to_none=True)
        xx, yy = (x, y) if perm is None else (x[perm], y[perm])  # the same loss summed in another order
        F.cross_entropy(model(xx), yy).backward()
        opt.step()

    for _ in range(steps):
        step()
    return model, opt, step


def _one_step_from_the_same_state(steps: int, restore_optimizer: bool) -> bool:
    """Eager step, then the 'replay' step (another reduction order) from the saved state;
    whether the weights compare as matching, relative to what the step changed."""
    import copy

    model, opt, step = _adamw_case(steps)
    before = [p.detach().clone() for p in model.parameters()]
    opt_state = copy.deepcopy(opt.state_dict())
    step()
    eager = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p, b in zip(model.parameters(), before, strict=True):
            p.copy_(b)
    if restore_optimizer:
        opt.load_state_dict(opt_state)
    step(torch.randperm(32))
    diffs = compare_trees(eager, [p.detach() for p in model.parameters()], "state", before=before)
    return summarise(diffs)["match"]


@pytest.mark.parametrize("steps", [2, 20, 200])
def test_adamw_rounding_differences_match_and_state_left_unrestored_does_not(steps):
    """The STEP_RTOL criterion: a replay that differs from eager only in its reduction order
    matches; one that starts from moments and a step count one step ahead does not."""
    assert _one_step_from_the_same_state(steps, restore_optimizer=True) is True
    assert _one_step_from_the_same_state(steps, restore_optimizer=False) is False


@pytest.fixture
def fake_cuda(monkeypatch):
    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            pass

        def record(self) -> None:
            pass

        def elapsed_time(self, end: object) -> float:
            return 0.001

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)


@pytest.mark.parametrize("undo", [True, False])
def test_validation_restores_an_optimizer_passed_in_between_eager_and_replay(fake_cuda, undo):
    """A training step given its model and AdamW as arguments: the replay half must start
    from the moments and step count eager started from (the plan once restored only the
    tensors it found through globals and modules). The 'graph' here reruns the step
    eagerly into a static output, as a replay computes the same ops on the live state."""
    import torch.nn.functional as F

    from launchprof.worker.observe import bind_arguments
    from launchprof.worker.reach import reach
    from launchprof.worker.saved_state import SavedState
    from launchprof.worker.state_roots import step_roots
    from launchprof.worker.validator import validate

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))

    def train(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    for _ in range(3):
        train(model, opt, x, y)
    args = (model, opt, x, y)
    roots = step_roots(train, [bind_arguments(train, args, {})])
    mutated = {p for p, _ in reach(roots).tensors if not p.endswith(".grad") and p not in ("x", "y")}  # what the warm-up calls see
    static_out = torch.zeros(())
    result = validate(
        train, lambda: static_out.copy_(train(*args)), static_out, args, {}, {}, {}, set(),
        lambda: SavedState.take(roots, mutated), (lambda saved: saved.restore()) if undo else (lambda saved: []),
    )
    assert result.fields["match"] is undo
    if not undo:
        assert result.fields["worst"]["path"].startswith("state ")


def _lerp_without_version(monkeypatch):
    """torch._foreach_lerp_ as PyTorch's CUDA fast path runs it with a scalar weight: the
    values change, the version counters do not (aten/src/ATen/native/cuda/ForeachTernaryOp.cu)."""
    real = torch._foreach_lerp_

    def lerp_(selves, ends, weight):
        real([s.data for s in selves], ends, weight)  # .data: the same memory, a counter of its own

    monkeypatch.setattr(torch, "_foreach_lerp_", lerp_)


def test_adams_exp_avg_is_seen_mutated_though_its_version_stays(monkeypatch):
    """The field run's replay-mismatch: the warm-up calls saw exp_avg_sq and step mutated,
    never exp_avg, so it was not saved and each replay started a step of momentum ahead."""
    from launchprof.worker.reach import reach
    from launchprof.worker.saved_state import changed_tensors, marked, version_of
    from launchprof.worker.state_roots import step_roots

    _lerp_without_version(monkeypatch)
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)

    def train(x):
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()

    x = torch.ones(2, 4)
    train(x)
    tensors = reach(step_roots(train, [{"x": x}])).tensors
    versions = {p: version_of(t) for p, t in tensors}
    before = marked(tensors)
    train(x)
    by_version = {p for p, t in tensors if version_of(t) != versions[p]}
    assert not any(p.endswith("['exp_avg']") for p in by_version)  # what the version alone says
    assert {p for p in changed_tensors(before) if p.endswith("['exp_avg']")} == {p for p, _ in tensors if p.endswith("['exp_avg']")}


def test_a_change_that_keeps_the_version_is_lost_not_missed():
    from launchprof.worker.saved_state import SavedState
    from launchprof.worker.state_roots import step_roots

    table = torch.zeros(4)

    def step():
        table.data.add_(1)

    saved = SavedState.take(step_roots(step, [{}]), mutated=set())
    step()
    assert [(x.path, x.why) for x in saved.restore()] == [("table", "not-cloned")]


def test_checksums_see_a_moved_element_and_skip_what_they_cannot_read():
    from launchprof.worker.fingerprint import MAX_HOST_BYTES, checksums

    a = torch.arange(6, dtype=torch.float32)
    swapped = a[[1, 0, 2, 3, 4, 5]]
    big = torch.zeros(MAX_HOST_BYTES // 4 + 1)
    sums = checksums([a, a.clone(), swapped, torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bfloat16), big, a.to_sparse()])
    assert sums[0] == sums[1] and sums[0] != sums[2]  # same bits, same sum; a swap changes it
    assert sums[3] is not None and sums[4] is not None and sums[5] is None and sums[6] is None


@pytest.mark.parametrize(
    "before, after",
    [
        (torch.tensor([0, 1, 1, 0], dtype=torch.bool), torch.tensor([1, 0, 0, 1], dtype=torch.bool)),
        (torch.tensor([0, 1, 1, 0]), torch.tensor([1, 0, 0, 1])),
        (torch.tensor([5.0, 0, 0, 0, 3, 7, 7, 3]), torch.tensor([5.0, 0, 0, 0, 7, 3, 3, 7])),
    ],
    ids=["bool", "int64", "float32"],
)
def test_checksums_see_opposite_moves_that_keep_every_plain_sum(before, after):
    """+d, -d, -d, +d at positions i, j, k, l with i + j = k + l: weights linear in the
    position would read the same sums before and after."""
    from launchprof.worker.fingerprint import checksums

    first, second = checksums([before, after])
    assert first[0] == second[0] and first != second


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_checksum_weights_are_fixed_and_leave_the_users_generator_alone(dtype):
    from launchprof.worker import fingerprint

    torch.manual_seed(3)
    user = torch.get_rng_state()
    fingerprint._WEIGHTS.clear()
    first = fingerprint._weights(torch.device("cpu"), dtype).clone()
    fingerprint._WEIGHTS.clear()
    again = fingerprint._weights(torch.device("cpu"), dtype)
    assert torch.equal(first, again) and first.dtype == dtype and first.numel() == fingerprint.CHUNK
    assert torch.equal(torch.get_rng_state(), user)


@pytest.mark.parametrize("undo", [True, False])
def test_validation_of_an_adamw_step_whose_exp_avg_keeps_its_version(fake_cuda, monkeypatch, undo):
    """The whole path on CPU: warm-up calls learn the mutated tensors (by checksum too), the
    validation saves and restores them between its eager call and its 'replay' (the step
    run again, as the graph computes it); without the restore it reads as a mismatch."""
    import torch.nn.functional as F

    from launchprof.worker.reach import reach
    from launchprof.worker.saved_state import SavedState, changed_tensors, marked
    from launchprof.worker.state_roots import step_roots
    from launchprof.worker.validator import validate

    _lerp_without_version(monkeypatch)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))

    def train(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    mutated: set[str] = set()
    for _ in range(3):  # the plan's warm-up calls
        before = marked(reach(step_roots(train, [{"x": x, "y": y}])).tensors)
        train(x, y)
        mutated.update(changed_tensors(before))
    assert any(p.endswith("['exp_avg']") for p in mutated)
    roots = step_roots(train, [{"x": x, "y": y}])
    static_out = torch.zeros(())
    result = validate(
        train, lambda: static_out.copy_(train(x, y)), static_out, (x, y), {}, {}, {}, set(),
        lambda: SavedState.take(roots, mutated), (lambda saved: saved.restore()) if undo else (lambda saved: []),
    )
    assert result.fields["match"] is undo
