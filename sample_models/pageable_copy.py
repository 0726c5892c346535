"""A host-to-device copy from pageable memory inside the step: capture fails.

    launchprof analyze sample_models/pageable_copy.py --target step
"""

from __future__ import annotations

import torch


def step(x: torch.Tensor) -> torch.Tensor:
    bias = torch.tensor([0.5, -0.5, 1.0, 2.0]).cuda()  # expect: pageable-copy
    return x * 2 + bias


def main() -> None:
    x = torch.randn(1024, 4, device="cuda")
    for _ in range(100):
        y = step(x)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
