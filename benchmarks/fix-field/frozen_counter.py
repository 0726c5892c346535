"""Issue 34: a Python counter used inside the step: captures fine, every replay reuses the
captured value.

    launchprof analyze benchmarks/fix-field/frozen_counter.py --target step
"""

import torch


class Stepper:
    def __init__(self) -> None:
        self.t = 0
        self.w = torch.randn(256, device="cuda")

    def step(self, x: torch.Tensor) -> torch.Tensor:
        self.t += 1
        return x * self.w + self.t * 0.01


def main() -> None:
    torch.manual_seed(0)
    s = Stepper()
    x = torch.randn(256, device="cuda")
    for _ in range(60):
        y = s.step(x)
    print(f"y {float(y.sum()):.3f}")


if __name__ == "__main__":
    main()
