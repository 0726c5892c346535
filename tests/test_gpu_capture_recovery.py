"""A failed capture leaves the process as it found it (skipped without CUDA).

``torch.cuda.graph.__exit__`` skips its stream restore when ``capture_end`` raises, so a
failed capture used to leave every later eager op, the script's and the timing bursts',
on the graph's capture stream. Checked against the plainest measurement: the same step
timed in a plain loop before the failed capture and after it, in this process."""

from __future__ import annotations

import statistics
import time

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def syncing_step(x: torch.Tensor) -> torch.Tensor:
    for _ in range(6):
        x = torch.tanh(x) + 0.1
    peak = x.abs().max().item()  # a sync: capture fails here
    return x / (peak + 1.0)


def loop_us(fn, *args, n: int = 200) -> float:
    for _ in range(10):
        fn(*args)
    torch.cuda.synchronize()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


def test_failed_capture_restores_the_stream_and_the_step_cost():
    from launchprof.worker.capture import CaptureFailed, capture

    x = torch.randn(1024, device="cuda")
    before_stream = torch.cuda.current_stream()
    before_us = loop_us(syncing_step, x)
    with pytest.raises(CaptureFailed) as failed:
        capture(syncing_step, (x,), {}, warmup=2, before_capture=lambda: None)
    assert failed.value.info["kind"] == "hidden-sync"
    assert torch.cuda.current_stream() == before_stream
    after_us = loop_us(syncing_step, x)
    assert after_us < 1.3 * before_us, (before_us, after_us)
    # Random ops still work eagerly after the failure (the generator left capture mode).
    torch.rand(4, device="cuda")
    torch.cuda.synchronize()
