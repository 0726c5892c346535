"""Helpers imported by the sample models (a sibling module, as real projects have)."""

from __future__ import annotations

import torch


def clamp_scores(scores: torch.Tensor) -> torch.Tensor:
    """Normalise scores; the host-side guard below synchronises."""
    if scores.max() > 10:  # expect: hidden-sync
        scores = scores / 10
    return scores.softmax(-1)
