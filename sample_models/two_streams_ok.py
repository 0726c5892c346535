"""A correct two-stream fork and join: captures cleanly, no hazards.

    launchprof analyze sample_models/two_streams_ok.py --target step
"""

from __future__ import annotations

import torch

side = torch.cuda.Stream() if torch.cuda.is_available() else None


def step(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    main = torch.cuda.current_stream()
    side.wait_stream(main)  # fork: the side stream joins the capture here
    a = torch.relu(x @ w1)
    with torch.cuda.stream(side):
        b = torch.sigmoid(x @ w2)
    main.wait_stream(side)  # join before the step ends
    return a + b


def main() -> None:
    torch.manual_seed(0)
    w1 = torch.randn(256, 256, device="cuda")
    w2 = torch.randn(256, 256, device="cuda")
    x = torch.randn(128, 256, device="cuda")
    for _ in range(100):
        y = step(x, w1, w2)
        x = y / y.norm()
    print(float(y.sum()))


if __name__ == "__main__":
    main()
