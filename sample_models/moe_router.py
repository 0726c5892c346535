"""A mixture-of-experts router that gathers each expert's rows with ``nonzero``: the row count
is data-dependent, so the host must wait for it and capture fails. launchprof writes the
fixed-shape form: every expert on all rows, then select each row's expert with torch.where.

    launchprof analyze sample_models/moe_router.py --target step
"""

from __future__ import annotations

import torch

EXPERTS = 4
DIM = 256


def step(x: torch.Tensor, gate: torch.Tensor, experts: torch.Tensor) -> torch.Tensor:
    route = (x @ gate).argmax(-1)
    out = torch.zeros_like(x)
    for e in range(EXPERTS):
        idx = (route == e).nonzero().squeeze(1)  # expect: hidden-sync
        out[idx] = x[idx] @ experts[e]
    return out


def main() -> None:
    torch.manual_seed(0)
    gate = torch.randn(DIM, EXPERTS, device="cuda")
    experts = torch.randn(EXPERTS, DIM, DIM, device="cuda") / DIM**0.5
    for _ in range(50):
        x = torch.randn(64, DIM, device="cuda")
        y = step(x, gate, experts)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
