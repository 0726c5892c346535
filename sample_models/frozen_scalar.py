"""An SGD-like update whose learning rate decays: the graph freezes the first `lr`.

The target is marked with the no-op decorator @launchprof.target, so no --target is needed.

    launchprof analyze sample_models/frozen_scalar.py
"""

from __future__ import annotations

import torch

import launchprof


@launchprof.target
def update(param: torch.Tensor, grad: torch.Tensor, lr: float) -> torch.Tensor:
    param.add_(grad, alpha=-lr)  # expect: frozen-scalar
    return param.norm()


def main() -> None:
    torch.manual_seed(0)
    param = torch.randn(4096, device="cuda")
    grad = torch.randn(4096, device="cuda")
    lr = 0.1
    for _ in range(100):
        update(param, grad, lr)
        lr *= 0.98
    print(float(param.norm()))


if __name__ == "__main__":
    main()
