"""A small step (a dict and a list of new tensors through 6 small kernels), then the same
step timed directly in this process: eager calls back to back and a hand-captured CUDA
graph (copy_ into static inputs + replay), each synchronised, median of 60. The direct
figures go to the JSON file named by LAUNCHPROF_DIRECT_OUT, for tests/test_gpu_analyze.py, with
the host's speed (a plain ``x.add_`` loop) before the first step and after the direct timing.
"""

from __future__ import annotations

import json
import os

import torch
from direct_loop import host_op_us, median_us

W = torch.randn(64, 64, device="cuda")


def step(batch: dict[str, torch.Tensor], extra: list[torch.Tensor]) -> torch.Tensor:
    h = torch.relu(batch["x"] @ W)  # 2 kernels
    h = h * batch["scale"] + extra[0]  # 2
    return torch.tanh(h) - extra[1]  # 2


def inputs() -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    batch = {"x": torch.randn(32, 64, device="cuda"), "scale": torch.rand(1, device="cuda")}
    return batch, [torch.randn(32, 64, device="cuda"), torch.randn(32, 64, device="cuda")]


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
    host_before = host_op_us() if out else None  # before the first step: before launchprof profiles anything
    for _ in range(80):
        batch, extra = inputs()
        step(batch, extra)
    torch.cuda.synchronize()
    if out:
        figures = direct()
        figures.update(host_before_us=host_before, host_after_us=host_op_us())
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(figures, fh)


if __name__ == "__main__":
    main()
