import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)

    def calibrate(self, x: torch.Tensor) -> torch.Tensor:
        return x / x.std().item()  # finds(method): hidden-sync

    def calibrate_ok(self, x: torch.Tensor) -> torch.Tensor:
        return x / x.std().clamp_min(1e-6)


def build_scorer() -> nn.Module:
    model = Scorer()
    return model
