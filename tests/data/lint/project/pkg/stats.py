"""Helpers in another module of the project; marks: finds(TARGET): KIND."""

import torch


def running_mean(acc: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    acc = acc * 0.9 + x * 0.1
    if bool(acc.sum() > 10):  # finds(helper): hidden-sync
        acc = acc / 10
    return acc


def running_mean_ok(acc: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    acc = acc * 0.9 + x * 0.1
    return torch.where(acc.sum() > 10, acc / 10, acc)


def maybe_residual(x: torch.Tensor, use):
    if use % 2:  # finds(branch): data-dependent-control-flow, frozen-scalar
        x = x + torch.sigmoid(x)
    return x


def lr_at(step: int) -> float:
    return 0.1 * min(1.0, step / 100)
