import torch


def clip(x: torch.Tensor) -> torch.Tensor:
    return x / x.abs().max().item()  # finds(relative): hidden-sync


def clip_ok(x: torch.Tensor) -> torch.Tensor:
    return x / x.abs().amax().clamp_min(1e-6)
