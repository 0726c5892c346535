"""Issue 34: a fork onto a side stream that is never joined, inside an indented function.

    launchprof analyze benchmarks/fix-field/unjoined_fork.py --target Model.step
"""

import torch


class Model:
    def __init__(self) -> None:
        self.side = torch.cuda.Stream()
        self.w = torch.randn(256, 256, device="cuda")

    def step(self, x: torch.Tensor) -> torch.Tensor:
        side = self.side
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = torch.tanh(x @ self.w)  # on the side stream
        z = torch.relu(x) + 1.0
        return z, y


def main() -> None:
    torch.manual_seed(0)
    m = Model()
    x = torch.randn(256, 256, device="cuda")
    for _ in range(60):
        z, y = m.step(x)
    torch.cuda.synchronize()
    print(f"z {float(z.sum()):.2f} y {float(y.sum()):.2f}")


if __name__ == "__main__":
    main()
