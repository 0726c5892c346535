"""A step full of hidden synchronisations: capture fails, launchprof names every line.

    launchprof analyze sample_models/hidden_sync.py --target step
"""

from __future__ import annotations

import torch

from _helpers import clamp_scores


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x @ w)
    scale = h.abs().mean().item()  # expect: hidden-sync
    keep = h[h > 0]  # expect: hidden-sync
    h = h / (scale + keep.numel())
    probs = clamp_scores(h)
    top = probs.argmax(-1).cpu()  # expect: hidden-sync
    torch.cuda.synchronize()  # expect: hidden-sync
    return probs * top.numel()


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(512, 512, device="cuda")
    for _ in range(100):
        x = torch.randn(64, 512, device="cuda")
        step(x, w)
    print("done")


if __name__ == "__main__":
    main()
