"""A step that reduces over the batch: padding a call up to a capture size is NOT safe.

Each row is mixed with the batch mean (a pooled context vector). Padded rows count in
that mean, so the real rows' results change when the call is padded. launchprof names the
`mean` line and the fix: a mask plus the true batch size held in a device tensor.

    launchprof analyze sample_models/batch_reduce.py --target step
"""

from __future__ import annotations

import torch

DIM = 256
SIZES = [3, 8, 5, 13, 8, 1, 16, 8, 2, 8]


def step(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.gelu(x @ w1)
    pooled = h.mean(dim=0)  # over the batch: padded rows count too
    return (h + pooled) @ w2


def weights() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(DIM, DIM, device="cuda") / 16, torch.randn(DIM, DIM, device="cuda") / 16


def main() -> None:
    w1, w2 = weights()
    total = torch.zeros((), device="cuda")
    for i in range(120):
        x = torch.randn(SIZES[i % len(SIZES)], DIM, device="cuda")
        total += step(x, w1, w2).mean()  # expect: dynamic-shape
    print("checksum:", float(total))


if __name__ == "__main__":
    main()
