"""Issue 34: host bookkeeping inside the step (a counter and a history of it).

    launchprof analyze benchmarks/fix-field/host_bookkeeping.py --target step
"""

import torch

n_calls = 0
history: list[int] = []


def step(x: torch.Tensor) -> torch.Tensor:
    global n_calls
    n_calls += 1
    history.append(n_calls)
    return torch.relu(x * 2.0 + 1.0)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(512, device="cuda")
    for _ in range(60):
        y = step(x)
    print(f"calls {n_calls} last {history[-1]} y {float(y.sum()):.3f}")


if __name__ == "__main__":
    main()
