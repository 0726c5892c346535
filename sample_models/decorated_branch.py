"""A target wrapped by ``@torch.no_grad()`` that branches on a tensor's value. The wrapper
lives in torch/utils/_contextlib.py; launchprof must still name this file and the ``if``
line, and write the torch.where form of the branch.

    launchprof analyze sample_models/decorated_branch.py --target step
"""

from __future__ import annotations

import torch


@torch.no_grad()
def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = x @ w
    if h.mean() > 0:  # expect: hidden-sync
        h = torch.relu(h)
    return h * 2


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda")
    for _ in range(50):
        x = torch.randn(32, 256, device="cuda")
        y = step(x, w)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
