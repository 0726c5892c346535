"""Issue 34: the step reads a global tensor that the caller's loop rebinds each time.

    launchprof analyze benchmarks/fix-field/caller_rebinds.py --target step
"""

import torch

bias = torch.zeros(512, device="cuda")


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x + bias)


def main() -> None:
    torch.manual_seed(0)
    global bias
    x = torch.randn(512, device="cuda")
    seen = []
    for _ in range(60):
        y = step(x)
        seen.append(bias)
        bias = bias + 1.0
    print(f"y {float(y.sum()):.2f} first bias {float(seen[0][0]):.1f}")


if __name__ == "__main__":
    main()
