"""A host branch on a Python argument: different kernels on different calls. Only the
branch taken during capture would exist in the graph.

    launchprof analyze sample_models/data_dependent.py --target step
"""

from __future__ import annotations

import torch


def step(x: torch.Tensor, use_residual: int) -> torch.Tensor:
    y = torch.tanh(x)
    if use_residual % 2:  # expect: data-dependent-control-flow, frozen-scalar
        y = y + torch.sigmoid(x) * 0.5
    return y


def main() -> None:
    x = torch.randn(512, 512, device="cuda")
    for i in range(100):
        step(x, i)
    print("done")


if __name__ == "__main__":
    main()
