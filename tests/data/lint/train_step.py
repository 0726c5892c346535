"""A small-batch training step, written the way people write one before trying to capture it.

Fixture for tests/test_lint_cli.py. A line that lint must report ends with a "finds"
comment naming the kind; every other line must stay quiet. Two lines carry inline
suppressions, so they must not be reported either.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import launchprof

log = logging.getLogger(__name__)
DIM = 64


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)  # torch's own RNG: graph-safe

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.fc1(x))
        if h.isnan().any():  # finds: hidden-sync
            h = torch.nan_to_num(h)
        return self.fc2(self.drop(h))


model = MLP(DIM)
copy_stream = torch.cuda.Stream() if torch.cuda.is_available() else None


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Stays on the device: no finding."""
    hits = logits.argmax(dim=-1) == y
    return hits.float().mean()


@launchprof.target
def train_step(x: torch.Tensor, y: torch.Tensor, lr: float, step: int) -> torch.Tensor:
    batch = x.shape[0]
    if batch > 1 and x.size(-1) == DIM:  # shapes are host values: no sync
        x = F.layer_norm(x, (DIM,))
    logits = model(x)
    top, _ = logits.max(dim=-1)
    loss = F.cross_entropy(logits, y) + 0.0 * top.mean()
    loss.backward()
    acc = accuracy(logits, y)
    valid = y[y >= 0]  # finds: hidden-sync
    class_weights = torch.tensor([1.0, 2.0, 0.5]).to(x.device)  # finds: pageable-copy
    jitter = np.random.uniform(0.9, 1.1)  # finds: rng-state
    for p in model.parameters():
        if p.grad is None:
            continue
        p.add_(p.grad, alpha=-lr)  # finds: frozen-scalar
    safe = torch.where(loss > 0, loss, torch.zeros_like(loss))
    log.info("loss %s", loss)  # finds: hidden-sync
    if step % 100 == 0:  # finds: frozen-scalar, data-dependent-control-flow
        print(f"step {step} acc {acc}")  # finds: hidden-sync
    total = loss.item()  # launchprof: ignore
    lr_t = torch.full((), lr, device=x.device)  # launchprof: ignore[frozen-scalar]
    copy_stream.wait_stream(torch.cuda.current_stream())  # finds: unjoined-stream
    with torch.cuda.stream(copy_stream):
        snapshot = loss.detach().clone()
    return safe + valid.numel() * class_weights.sum() * jitter + total + lr_t + snapshot
