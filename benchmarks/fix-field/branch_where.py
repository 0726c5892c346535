"""Issue 34: a branch on a device value that both sides return from.

    launchprof analyze benchmarks/fix-field/branch_where.py --target step
"""

import torch


def step(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x @ w)
    if h.mean() > 0:
        return h * 2.0
    else:
        return h - 1.0


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(128, 128, device="cuda") / 12
    total = torch.zeros((), device="cuda")
    for i in range(60):
        x = torch.randn(64, 128, device="cuda") + (0.5 if i % 2 else -0.5)
        total += step(w, x).sum()
    print(f"total {float(total):.3f}")


if __name__ == "__main__":
    main()
