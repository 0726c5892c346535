"""The step reads a global tensor that the loop rebinds every iteration: the graph keeps
reading the first tensor's memory, silently. launchprof catches it by validation.

    launchprof analyze sample_models/reallocated_global.py --target step
"""

from __future__ import annotations

import torch

weights = None


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ weights)  # expect: reallocated-input


def main() -> None:
    global weights
    torch.manual_seed(0)
    x = torch.randn(64, 128, device="cuda")
    for i in range(100):
        weights = torch.randn(128, 128, device="cuda") * (1 + i / 100)  # a new allocation each call
        y = step(x)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
