"""Issue 34: a decorated step (@torch.no_grad()) with a host read inside: the finding belongs
at the read, never at the decorator line.

    launchprof analyze benchmarks/fix-field/no_grad_sync.py --target step
"""

import torch


@torch.no_grad()
def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x @ w
    scale = float(y.abs().max())
    return y / scale


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(128, 128, device="cuda", requires_grad=True)
    x = torch.randn(64, 128, device="cuda")
    for _ in range(60):
        y = step(x, w)
    print(f"y {float(y.sum()):.3f}")


if __name__ == "__main__":
    main()
