"""Issue 34: a GPU-bound step of 8 matmuls, each followed by a tanh (by hand on an H200:
eager 454 µs, replay 435 µs, 1.04x).

    launchprof analyze benchmarks/fix-field/gpu_bound_matmuls.py --target step
"""

import torch


def step(x: torch.Tensor, ws: list[torch.Tensor]) -> torch.Tensor:
    for w in ws:
        x = torch.tanh(x @ w)
    return x


def main() -> None:
    torch.manual_seed(0)
    ws = [torch.randn(2048, 2048, device="cuda") / 45 for _ in range(8)]
    x = torch.randn(2048, 2048, device="cuda")
    for _ in range(60):
        y = step(x, ws)
    print(f"y {float(y.abs().sum()):.2f}")


if __name__ == "__main__":
    main()
