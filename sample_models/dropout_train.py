"""An MLP with dropout in train mode: torch's own RNG is graph-safe. No hazards.

    launchprof analyze sample_models/dropout_train.py --target step
"""

from __future__ import annotations

import torch

net: torch.nn.Module


def step(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return net(x)


def main() -> None:
    global net
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(512, 256), torch.nn.Dropout(0.1)
    ).cuda()
    net.train()
    x = torch.randn(32, 256, device="cuda")
    for _ in range(100):
        y = step(x)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
