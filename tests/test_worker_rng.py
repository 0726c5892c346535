"""The worker tells whether a step draws from the default CUDA generator (CPU test: the
generator state is faked; on a GPU tests/test_gpu_analyze.py checks it end to end)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")


def _states(monkeypatch: pytest.MonkeyPatch, values: list[int]) -> None:
    """cuda_rng_state returns these (seed, offset)-like byte tensors, one per read."""
    from launchprof.worker import validator

    seq = iter([torch.tensor([v], dtype=torch.uint8) for v in values])
    monkeypatch.setattr(validator, "cuda_rng_state", lambda: next(seq))


def test_rng_advanced_compares_the_generator_before_and_after(monkeypatch):
    from launchprof.worker import validator

    _states(monkeypatch, [7, 8])
    assert validator.rng_advanced(validator.cuda_rng_state()) is True
    _states(monkeypatch, [7, 7])
    assert validator.rng_advanced(validator.cuda_rng_state()) is False
    assert validator.rng_advanced(None) is False  # no CUDA: nothing drawn


@pytest.mark.parametrize(("reads", "drawn"), [([1, 1, 1, 1, 1, 1], False), ([1, 1, 1, 2, 2, 2], True)])
def test_the_warm_up_reports_cuda_rng_in_the_mutations_event(tmp_path, monkeypatch, reads, drawn):
    """The three warm-up calls (the default) read the generator before and after each: one that moved it is
    enough (a step may draw only on some calls)."""
    from launchprof.worker import plan, validator
    from launchprof.worker.config import WorkerConfig
    from launchprof.worker.event_writer import EventWriter

    seq = iter([torch.tensor([v], dtype=torch.uint8) for v in reads])
    monkeypatch.setattr(plan, "cuda_rng_state", lambda: next(seq))
    monkeypatch.setattr(validator, "cuda_rng_state", lambda: next(seq))
    config = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path=str(tmp_path / "t.json"))
    run = plan.TargetRun(lambda: None, "f", config, EventWriter(config.events_path))
    for i in range(3):
        run._warmup(i, (), {}, [], {})
    run.events.close()
    events = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    mutations = [e for e in events if e["type"] == "mutations"]
    assert [e["cuda_rng"] for e in mutations] == [drawn]
