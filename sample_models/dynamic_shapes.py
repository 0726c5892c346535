"""A decode-style step whose batch size changes every call: one graph per shape.
launchprof recommends capture buckets and the padding they cost.

    launchprof analyze sample_models/dynamic_shapes.py --target step
"""

from __future__ import annotations

import torch

SIZES = [3, 8, 5, 13, 8, 1, 16, 8, 2, 8]


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    for _ in range(6):
        x = torch.nn.functional.gelu(x @ w)
    return x


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda") / 16
    for i in range(220):
        batch = SIZES[i % len(SIZES)]
        x = torch.randn(batch, 256, device="cuda")
        step(x, w)  # expect: dynamic-shape
    print("done")


if __name__ == "__main__":
    main()
