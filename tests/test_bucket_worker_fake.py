"""A dry run of the worker's bucket measurement on CPU, with a stand-in CUDA graph.

The stand-in records the captured call and, on replay, runs it again and copies the
results into the outputs it returned at capture: what a real graph does to its static
outputs. This checks the orchestration (padding, the per-size and shared captures, the
padding checks, the leak search, the sequence timing, the events, restoring the user's
state, failures becoming notes) on the two bucket samples, run on the CPU. It checks
none of the GPU numbers: tests/test_gpu_buckets.py does, on a GPU.
"""

from __future__ import annotations

import collections
import importlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import launchprof.worker.bucket_measure as wb  # noqa: E402
from launchprof.analysis.bucket_advice import bucket_plan
from launchprof.events.observation_events import ArgLeaf, CallEvent
from launchprof.run.evidence import parse_events
from launchprof.worker.config import WorkerConfig  # noqa: E402
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.observe import bind_arguments, describe_call  # noqa: E402
from launchprof.worker.plan import TargetRun  # noqa: E402
from launchprof.worker.trees import copy_into, tensor_leaves  # noqa: E402
from tests.notes_said import said  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
MiB = 2**20


class FakeGraph:
    """Replays by running the captured call again into the captured outputs."""

    def __init__(self, *args, **kwargs) -> None:
        self.call = None
        self.out = None
        self.bytes = 0

    def replay(self) -> None:
        copy_into(self.out, self.call())


class FakeStream:
    def wait_stream(self, other) -> None:
        pass


@pytest.fixture
def fake_cuda(monkeypatch):
    pools: dict[object, list[FakeGraph]] = collections.defaultdict(list)

    def record(graph, pool, call):
        graph.call, graph.out = call, call()
        graph.bytes = MiB * (1 + sum(t.numel() * t.element_size() for _, t in tensor_leaves(graph.out)) // MiB)
        pools[pool].append(graph)
        return graph.out

    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *a: FakeStream())
    monkeypatch.setattr(torch.cuda, "stream", lambda s: __import__("contextlib").nullcontext())
    monkeypatch.setattr(torch.cuda, "graph_pool_handle", lambda: object())
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda *a: 0)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(wb, "_record", record)
    monkeypatch.setattr(wb, "pool_segment_bytes", lambda g: g.bytes)
    monkeypatch.setattr(wb, "pool_bytes", lambda pool: max(g.bytes for g in pools[pool]))
    monkeypatch.setattr(wb, "REPLAY_REPS", 2)
    monkeypatch.setattr(wb, "SEQUENCE_ROUNDS", 4)
    return pools


def cpu_sample(name: str, tmp_path: Path):
    """The sample with its tensors on the CPU (same lines: only the device changes)."""
    path = tmp_path / f"{name}.py"
    path.write_text((SAMPLES / f"{name}.py").read_text().replace('"cuda"', '"cpu"').replace(".cuda()", ""))
    spec = importlib.util.spec_from_file_location(f"cpu_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod, path


def make_run(fn, calls: list[tuple[tuple, dict]], tmp_path: Path, **config) -> TargetRun:
    """A plan that observed ``calls`` (call events written) and kept the last ones as burst sets."""
    events_path = tmp_path / "events.jsonl"
    cfg = WorkerConfig(str(tmp_path / "s.py"), [], "step", str(events_path), str(tmp_path / "t.json"), **config)
    run = TargetRun(fn, "step", cfg, EventWriter(str(events_path)))
    for i, (args, kwargs) in enumerate(calls):
        leaves = [ArgLeaf(**r) for r in describe_call(bind_arguments(fn, args, kwargs))]
        run.events.write(CallEvent(index=i, phase="eager", args=leaves))
    run.eager_sets.extend(calls[-4:])
    run.captured = object()  # the plan's own capture succeeded
    # The worker sees CUDA state only; here the module's CPU buffers stand in for it.
    module = getattr(importlib.import_module(fn.__module__), "model", None) if fn.__module__ in sys.modules else None
    if module is not None:
        run.state_of = lambda args, kwargs: dict(module.named_buffers())
    run.mutated_state = set(run.state_of(*calls[0]))
    return run


def events_of(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]


def test_decode_sample_measures_every_size_and_padding_is_safe(fake_cuda, tmp_path):
    mod, _ = cpu_sample("bucketed_decode", tmp_path)
    mod.build()
    clock = torch.zeros((), dtype=torch.long)
    calls = []
    for i in range(14):
        calls.append((mod.inputs(mod.SIZES[i % len(mod.SIZES)], clock), {}))
        mod.step(*calls[-1][0])
        clock.add_(1)
    run = make_run(mod.step, calls, tmp_path)
    caches = [b.clone() for b in mod.model.buffers()]
    wb.measure_buckets(run)
    events = events_of(tmp_path)
    assert not [e for e in events if e["type"] == "note"], [e for e in events if e["type"] == "note"]
    plan = bucket_plan(parse_events(events))
    assert plan.recommended == [1, 2, 4, 8, 16, 24]
    assert [m.size for m in plan.measured] == plan.recommended
    assert all(m.matches for m in plan.measured), json.dumps([e for e in events if e["type"] in ("bucket-check", "bucket-leak")])  # every size checked, with padding
    assert plan.padding_safe is True and plan.leaks == []
    end = next(e for e in events if e["type"] == "bucket-end")
    assert len(end["eager_us"]) == len(end["plan_us"]) == 4
    # the KV caches the extra calls wrote are the user's again
    assert all(torch.equal(a, b) for a, b in zip(caches, mod.model.buffers()))


def test_reduce_sample_is_unsafe_at_the_mean_line(fake_cuda, tmp_path):
    mod, path = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    calls = [((torch.randn(n, mod.DIM), w1, w2), {}) for n in mod.SIZES[:8]]
    run = make_run(mod.step, calls, tmp_path)
    wb.measure_buckets(run)
    plan = bucket_plan(parse_events(events_of(tmp_path)))
    assert plan.padding_safe is False
    assert [m.matches for m in plan.measured if m.size > 1] == [False] * 4
    leak = plan.leaks[0]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "pooled = h.mean(dim=0)" in text)
    assert (leak.op, leak.file, leak.line) == ("mean", str(path), line)
    assert plan.fix is not None


def test_memory_limit_drops_the_largest_sizes(fake_cuda, tmp_path):
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    calls = [((torch.randn(n, mod.DIM), w1, w2), {}) for n in (3, 8, 5, 13, 1, 16)]
    run = make_run(mod.step, calls, tmp_path, buckets=[2, 8, 64], bucket_memory=MiB)
    # 64 rows of 256 float32 outputs: 64 KiB + the stand-in's 1 MiB rounding -> over 1 MiB
    wb.measure_buckets(run)
    end = next(e for e in events_of(tmp_path) if e["type"] == "bucket-end")
    assert end["dropped"] == [2, 8, 64][len(end["kept"]):]
    plan = bucket_plan(parse_events(events_of(tmp_path)))
    assert plan.source == "user" and plan.recommended == end["kept"]


def test_a_failure_becomes_a_note_and_the_state_is_restored(fake_cuda, monkeypatch, tmp_path):
    mod, _ = cpu_sample("bucketed_decode", tmp_path)
    mod.build()
    clock = torch.zeros((), dtype=torch.long)
    calls = [(mod.inputs(n, clock), {}) for n in (3, 5, 8)]
    run = make_run(mod.step, calls, tmp_path)
    caches = [b.clone() for b in mod.model.buffers()]

    def broken(graph, pool, call):
        call()  # writes the caches, as a capture's warm-up would
        raise RuntimeError("capture exploded")

    monkeypatch.setattr(wb, "_record", broken)
    monkeypatch.setattr("launchprof.worker.capture.recover_after_failed_capture", lambda: None)
    wb.measure_buckets(run)
    notes = [said(e) for e in events_of(tmp_path) if e["type"] == "note"]
    assert any("capture exploded" in n for n in notes)
    assert all(torch.equal(a, b) for a, b in zip(caches, mod.model.buffers()))


def test_nothing_happens_when_shapes_do_not_vary(fake_cuda, tmp_path):
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    run = make_run(mod.step, [((torch.randn(4, mod.DIM), w1, w2), {}) for _ in range(3)], tmp_path)
    wb.measure_buckets(run)
    assert not [e for e in events_of(tmp_path) if e["type"].startswith("bucket") or e["type"] == "note"]


@pytest.mark.parametrize(
    ("config", "distributed", "says"),
    [
        ({"buckets": list(range(1, wb.MAX_MEASURED_SIZES + 2))}, False, "too many to measure"),
        ({}, True, "several ranks"),
    ],
)
def test_plans_it_cannot_measure_safely_are_recommended_only(fake_cuda, monkeypatch, tmp_path, config, distributed, says):
    """Hundreds of sizes (a varying prompt length) or a step on several ranks, where an extra
    call made on one rank only would leave the others in a collective: no capture at all, a
    note, and the plan still recommended from the shapes."""
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    run = make_run(mod.step, [((torch.randn(n, mod.DIM), w1, w2), {}) for n in (3, 8, 5)], tmp_path, **config)
    monkeypatch.setattr(wb, "distributed", lambda: distributed)
    wb.measure_buckets(run)
    events = events_of(tmp_path)
    assert [e for e in events if e["type"] == "bucket-plan"]
    assert not [e for e in events if e["type"] in ("bucket-measure", "bucket-check", "bucket-end")]
    assert any(says in said(e) for e in events if e["type"] == "note")
    plan = bucket_plan(parse_events(events))
    assert plan.measured == [] and plan.padding_safe is None


def test_workspace_comes_from_the_plans_own_capture_when_the_throwaway_finds_none(fake_cuda, tmp_path):
    """The stand-in's pools hold no workspace (as on a GPU once the plan's capture ran): the
    figure is the one the plan's own capture measured, not 0."""
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    run = make_run(mod.step, [((torch.randn(n, mod.DIM), w1, w2), {}) for n in (3, 8, 5)], tmp_path)
    run.captured = type("Captured", (), {"workspace_bytes": 32 * MiB})()
    wb.measure_buckets(run)
    end = next(e for e in events_of(tmp_path) if e["type"] == "bucket-end")
    assert end["workspace_bytes"] == 32 * MiB


def test_buckets_asked_for_without_varying_shapes_say_so(fake_cuda, tmp_path):
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    run = make_run(mod.step, [((torch.randn(4, mod.DIM), w1, w2), {}) for _ in range(3)], tmp_path, buckets=[1, 2, 4])
    wb.measure_buckets(run)
    events = events_of(tmp_path)
    assert not [e for e in events if e["type"].startswith("bucket")]
    assert [said(e) for e in events if e["type"] == "note"] == [
        "--buckets: the target's argument shapes did not vary between calls, so there is no bucket plan"
    ]


def test_one_warm_up_stream_for_every_capture(fake_cuda, monkeypatch, tmp_path):
    """cuBLAS keeps a workspace per stream it ran on for the rest of the process: the bucket
    captures (a throwaway, one per size alone, one per size shared) share one side stream."""
    mod, _ = cpu_sample("batch_reduce", tmp_path)
    w1, w2 = mod.weights()
    run = make_run(mod.step, [((torch.randn(n, mod.DIM), w1, w2), {}) for n in (3, 8, 5, 13)], tmp_path)
    made: list[FakeStream] = []
    monkeypatch.setattr(torch.cuda, "Stream", lambda *a, **k: made.append(FakeStream()) or made[-1])
    wb.measure_buckets(run)
    assert [e for e in events_of(tmp_path) if e["type"] == "bucket-end"]
    assert len(made) == 1
