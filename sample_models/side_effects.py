"""A step that counts calls, appends to a history list and prints: replay repeats none of it.

    launchprof analyze sample_models/side_effects.py --target step
"""

from __future__ import annotations

import torch

calls = 0
history: list[torch.Tensor] = []


def step(x: torch.Tensor) -> torch.Tensor:
    global calls
    calls += 1  # expect: host-side-effect
    y = torch.sin(x) * 2
    history.append(y)  # expect: host-side-effect, kept-output
    if calls % 50 == 0:
        print("step", calls)  # expect: host-side-effect
    return y


def main() -> None:
    x = torch.randn(1000, device="cuda")
    for _ in range(100):
        step(x)
    print(len(history))


if __name__ == "__main__":
    main()
