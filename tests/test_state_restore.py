"""Leaving the user's script working, on CPU: everything a step reaches (a KV cache held as
a global or passed in, its lazily made tensors, counters and flags) is saved before
launchprof's extra calls and put back after them exactly; what cannot be put back is said
and stops the script; what cannot be saved at all is said."""

from __future__ import annotations

import json
import sys

import pytest

torch = pytest.importorskip("torch")
from launchprof.worker.config import WorkerConfig  # noqa: E402
from launchprof.worker.event_writer import EventWriter  # noqa: E402
from launchprof.worker.observe import bind_arguments  # noqa: E402
from launchprof.worker.reach import Budget, reach  # noqa: E402
from launchprof.worker.saved_state import SavedState, changed_tensors, marked  # noqa: E402
from launchprof.worker.state_roots import step_roots  # noqa: E402
from tests.notes_said import said  # noqa: E402


class FakeKV:
    """A cache as libraries write them: tensors made on the first update, then written in
    place at a position kept in a tensor; a Python counter, a flag, a list of lengths."""

    def __init__(self, layers: int, rows: int = 6) -> None:
        self.n, self.rows = layers, rows
        self.is_initialized = False
        self.keys: list[torch.Tensor] = []
        self.pos = torch.zeros((), dtype=torch.long)
        self.updates = 0
        self.lengths: list[int] = []

    def update(self, k: torch.Tensor) -> torch.Tensor:
        if not self.is_initialized:
            self.keys = [torch.zeros(self.rows, 3) for _ in range(self.n)]
            self.is_initialized = True
        for t in self.keys:
            t.index_copy_(0, self.pos.reshape(1), k.reshape(1, 3))  # out of bounds once pos reaches rows
        self.pos.add_(1)
        self.updates += 1
        self.lengths.append(int(self.pos))
        return sum(t.sum() for t in self.keys)


CACHE = FakeKV(2)


def decode(x: torch.Tensor, kv: FakeKV) -> torch.Tensor:
    return CACHE.update(x) + kv.update(x * 2)


def _roots(fn, *args):
    return step_roots(fn, [bind_arguments(fn, args, {})])


def _mutated_by(fn, *args) -> set[str]:
    """What the plan's warm-up calls learn: the paths of tensors one call changes in place."""
    before = marked(reach(_roots(fn, *args)).tensors)
    fn(*args)
    return set(changed_tensors(before))


def _state(kv: FakeKV) -> tuple:
    return (kv.is_initialized, [t.clone() for t in kv.keys], [id(t) for t in kv.keys], int(kv.pos), id(kv.pos), kv.updates, list(kv.lengths))


def _same(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and all(torch.equal(x, y) for x, y in zip(a[1], b[1], strict=True)) and a[2:] == b[2:]


def test_a_cache_held_as_a_global_and_passed_in_is_put_back_exactly():
    global CACHE
    CACHE, arg = FakeKV(2), FakeKV(3)
    x = torch.ones(3)
    decode(x, arg)  # the first call makes the tensors, as a warm-up call does
    mutated = _mutated_by(decode, x, arg)
    assert {"CACHE.keys[0]", "CACHE.pos", "kv.keys[2]", "kv.pos"} <= mutated
    before = (_state(CACHE), _state(arg))
    saved = SavedState.take(_roots(decode, x, arg), mutated)
    for _ in range(3):  # launchprof's extra calls
        decode(x, arg)
    arg.keys = [torch.ones(1)]  # and a rebinding, as a library's reset would do
    assert not _same(_state(CACHE), before[0]) and CACHE.updates == 5
    assert saved.restore() == []
    assert _same(_state(CACHE), before[0]) and _same(_state(arg), before[1])
    for _ in range(3):  # the script's own next calls run as they would have: pos 2, 3, 4
        decode(x, arg)
    assert int(CACHE.pos) == 5 and CACHE.lengths == [1, 2, 3, 4, 5]


def test_the_restore_puts_back_python_values_lists_dicts_and_rng():
    import random

    class Box:
        __slots__ = ("count", "tag")

    box = Box()
    box.count, box.tag = 1, "a"
    table = {"a": 1}
    seq = [1, 2]
    g = torch.Generator().manual_seed(3)

    def step():
        box.count += 1
        if hasattr(box, "tag"):
            del box.tag
        table["b"] = 2
        seq.append(3)
        random.random()
        return torch.rand(1, generator=g) + torch.rand(1)

    saved = SavedState.take(_roots(step))
    drawn = random.getstate()
    first = step()
    step()
    assert saved.restore() == []
    assert box.count == 1 and box.tag == "a" and table == {"a": 1} and seq == [1, 2]
    assert random.getstate() == drawn
    assert torch.equal(step(), first)  # torch's CPU generator and the step's own one


def test_a_tensor_changed_without_a_clone_and_an_advanced_generator_are_lost():
    def feed():
        yield from range(100)

    source = feed()
    buffer = torch.zeros(2)

    def step():
        buffer.add_(next(source))
        return buffer

    saved = SavedState.take(_roots(step), mutated=set())  # never seen mutated: not cloned
    step()
    lost = saved.restore()
    assert sorted((x.path, x.why) for x in lost) == [("buffer", "not-cloned"), ("source", "generator")]
    assert [u.why for u in saved.uncovered] == ["generator"]


def test_the_walk_reports_what_it_cannot_cover():
    import itertools

    opaque = type("Opaque", (), {"__slots__": ()})()  # state kept where the walk cannot see: no __dict__, no slots
    state = {"objs": [{"i": i} for i in range(30)], "long": [[i] for i in range(20_001)], "c": itertools.count()}

    def step():
        return state, opaque

    reached = reach(_roots(step), Budget(objects=20))
    whys = {u.why for u in reached.uncovered}
    assert "budget" in whys and reached.objects == 20
    wide = reach(_roots(step))
    assert {(u.path, u.why) for u in wide.uncovered} == {("state['long']", "long"), ("state['c']", "iterator"), ("opaque", "opaque")}


def test_a_module_and_an_optimizer_passed_in_are_walked_with_their_grads():
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train(model, opt, x):
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()

    x = torch.ones(4, 3)
    train(model, opt, x)
    mutated = _mutated_by(train, model, opt, x)
    assert {"model.weight", "model.bias"} <= mutated and any("exp_avg" in p for p in mutated)
    weight, grad = model.weight.detach().clone(), model.weight.grad
    moments = {k: v.clone() for k, v in opt.state[model.weight].items()}
    saved = SavedState.take(_roots(train, model, opt, x), mutated)
    train(model, opt, x)
    train(model, opt, x)
    assert saved.restore() == []
    assert torch.equal(model.weight, weight) and model.weight.grad is grad
    assert all(torch.equal(opt.state[model.weight][k], v) for k, v in moments.items())


# --- the plan: notes, and the clean stop ------------------------------------------------


class _FakeEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        pass

    def record(self) -> None:
        pass

    def elapsed_time(self, end: object) -> float:
        return 0.001


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "Event", _FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)


def _events(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run(tmp_path, step):
    from launchprof.worker.plan import TargetRun

    config = WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="", repeat=4)
    run = TargetRun(step, "step", config, EventWriter(config.events_path))
    run.keep.stop_on_lost = True
    return run


def test_bursts_on_a_decode_step_leave_its_cache_as_the_script_left_it(tmp_path, fake_cuda):
    global CACHE
    CACHE, arg = FakeKV(2, rows=12), FakeKV(1, rows=12)
    run = _run(tmp_path, decode)
    x = torch.ones(3)
    for _ in range(3):  # the warm-up phase, which learns what the step mutates
        run(x, arg)
    before = (_state(CACHE), _state(arg))
    run.eager_sets.append(((x, arg), {}))
    run._bursts()  # 17 extra calls: put back after every pass of 4, or pos would pass the cache's 12 rows
    assert _same(_state(CACHE), before[0]) and _same(_state(arg), before[1])
    assert not [e for e in _events(tmp_path / "e.jsonl") if e.get("code") in ("state-lost", "state-not-covered", "bursts-stopped")]
    run(x, arg)  # the script goes on
    assert int(CACHE.pos) == 4


def test_state_that_cannot_be_put_back_is_said_and_stops_the_script(tmp_path, fake_cuda):
    from launchprof.worker.plan_phases import STOPPED_REASON
    from launchprof.worker.script import ScriptStopped

    def feed():
        yield from range(10_000)

    source = feed()

    def step(x):
        return x + next(source)

    run = _run(tmp_path, step)
    x = torch.ones(1)
    for _ in range(3):
        run(x)
    run.eager_sets.append(((x,), {}))
    run._bursts()
    with pytest.raises(ScriptStopped):
        run(x)  # the script's next call: the plan closes, the script stops
    events = _events(tmp_path / "e.jsonl")
    lost = [e for e in events if e.get("code") == "state-lost"]
    assert len(lost) == 1 and lost[0]["params"]["paths"] == ["source"] and lost[0]["params"]["stopped"] is True
    assert "launchprof stopped the script" in said(lost[0])
    assert [e["reason"] for e in events if e["type"] == "plan-end"] == [STOPPED_REASON]
    with pytest.raises(ScriptStopped):
        run(x)  # a script that caught the SystemExit cannot go on either
    uncovered = [e for e in events if e.get("code") == "state-not-covered"]
    assert len(uncovered) == 1 and uncovered[0]["params"]["whys"] == ["generator"]


def test_a_budget_overflow_is_a_note_once(tmp_path, fake_cuda, monkeypatch):
    from launchprof.worker import plan_state

    monkeypatch.setattr(plan_state, "BUDGET", Budget(objects=3))
    items = [{"i": i} for i in range(10)]
    run = _run(tmp_path, lambda x: x + len(items))
    x = torch.ones(1)
    plan_state.save(run, [((x,), {})])
    plan_state.save(run, [((x,), {})])
    notes = [e for e in _events(tmp_path / "e.jsonl") if e.get("code") == "state-not-covered"]
    assert len(notes) == 1 and notes[0]["params"]["count"] > 0 and set(notes[0]["params"]["whys"]) == {"budget"}
    assert "past the save's size limits" in said(notes[0])


def test_a_stopped_script_ends_cleanly_with_its_finally_blocks_run(tmp_path):
    from launchprof.worker.script import run_script

    script = tmp_path / "s.py"
    script.write_text(
        "from launchprof.worker.script import ScriptStopped\n"
        "import pathlib\n"
        "try:\n"
        "    try:\n"
        "        raise ScriptStopped()\n"
        "    except Exception:\n"
        "        pathlib.Path('caught').write_text('no')\n"
        "finally:\n"
        f"    pathlib.Path({str(tmp_path / 'finally')!r}).write_text('yes')\n"
    )
    saved = (sys.argv[:], sys.path[:], sys.modules.get("__main__"))
    try:
        outcome = run_script(script, [], lambda ns: None)
    finally:
        sys.argv[:], sys.path[:] = saved[0], saved[1]
        sys.modules["__main__"] = saved[2]
    assert outcome.status == "stopped" and outcome.exit_code == 0
    assert (tmp_path / "finally").read_text() == "yes" and not (tmp_path / "caught").exists()


def test_inference_tensors_are_cloned_only_when_they_change():
    """Tensors made under inference_mode have no version counter: the checksum says which
    ones a step writes (the cache), so the weights are not copied at every save."""
    with torch.inference_mode():
        weight, cache = torch.randn(4, 4), torch.zeros(8, 4)
    pos = [0]

    def step(x):
        with torch.inference_mode():
            cache[pos[0]] = x @ weight
        pos[0] += 1

    x = torch.ones(4)
    before = marked(reach(_roots(step, x)).tensors)
    step(x)
    mutated = set(changed_tensors(before))
    assert mutated == {"cache"}
    saved = SavedState.take(_roots(step, x), mutated)
    assert [p for p, _, _ in saved.clones] == ["cache"]
    kept = cache.clone()
    step(x)
    assert saved.restore() == [] and torch.equal(cache, kept) and pos == [1]
