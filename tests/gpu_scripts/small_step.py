"""A small step (a dict and a list of new tensors through 6 small kernels), then the same
step timed directly in this process: eager calls back to back and a hand-captured CUDA
graph (copy_ into static inputs + replay), each synchronised, median of 60. The direct
figures go to the JSON file named by LAUNCHPROF_DIRECT_OUT, for tests/test_gpu_analyze.py, with
the host's speed (a plain ``x.add_`` loop, direct_loop.steady_host_op_us) and the eager step
timed directly, both before the first step and again at the end.
"""

from __future__ import annotations

import inspect
import json
import os

import torch
from direct_loop import median_us, steady_host_op_us

W = torch.randn(64, 64, device="cuda")


def step(batch: dict[str, torch.Tensor], extra: list[torch.Tensor]) -> torch.Tensor:
    h = torch.relu(batch["x"] @ W)  # 2 kernels
    h = h * batch["scale"] + extra[0]  # 2
    return torch.tanh(h) - extra[1]  # 2


def inputs() -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    batch = {"x": torch.randn(32, 64, device="cuda"), "scale": torch.rand(1, device="cuda")}
    return batch, [torch.randn(32, 64, device="cuda"), torch.randn(32, 64, device="cuda")]


def eager_directly() -> float:
    """The step itself (under launchprof, the function behind the hook's stand-in), timed
    by the plain loop on its own inputs: before the first step and at the end, a launch
    cost launchprof left on the process (CUPTI still subscribed) shows as the two apart."""
    raw = inspect.unwrap(step)
    batch, extra = inputs()
    for _ in range(5):
        raw(batch, extra)
    return median_us(lambda: raw(batch, extra))


def direct() -> dict[str, float]:
    batch, extra = inputs()
    for _ in range(5):
        step(batch, extra)
    eager = median_us(lambda: step(batch, extra))
    static_batch, static_extra = inputs()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(static_batch, static_extra)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(static_batch, static_extra)

    def replay() -> None:
        static_batch["x"].copy_(batch["x"])
        static_batch["scale"].copy_(batch["scale"])
        static_extra[0].copy_(extra[0])
        static_extra[1].copy_(extra[1])
        graph.replay()

    for _ in range(5):
        replay()
    return {"eager_us": eager, "replay_us": median_us(replay)}


def main() -> None:
    out = os.environ.get("LAUNCHPROF_DIRECT_OUT")
    before: dict[str, float] = {}
    if out:  # before the first step, so before launchprof profiles anything
        before = {"host_before_us": steady_host_op_us(), "eager_before_us": eager_directly()}
    for _ in range(80):
        batch, extra = inputs()
        step(batch, extra)
    torch.cuda.synchronize()
    if out:
        figures = direct()
        figures.update(before, host_after_us=steady_host_op_us(), eager_after_us=eager_directly())
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(figures, fh)


if __name__ == "__main__":
    main()
