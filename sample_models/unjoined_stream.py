"""Work forked to a side stream and never joined back: capture fails (unjoined).

    launchprof analyze sample_models/unjoined_stream.py --target step
"""

from __future__ import annotations

import torch

side = torch.cuda.Stream() if torch.cuda.is_available() else None


def step(x: torch.Tensor, stats: torch.Tensor) -> torch.Tensor:
    side.wait_stream(torch.cuda.current_stream())  # expect: unjoined-stream
    with torch.cuda.stream(side):
        stats.copy_(x.mean(0))  # side work nobody waits for
    return torch.tanh(x) * 2


def main() -> None:
    x = torch.randn(256, 256, device="cuda")
    stats = torch.zeros(256, device="cuda")
    for _ in range(100):
        y = step(x, stats)
    torch.cuda.synchronize()
    print(float(y.sum()))


if __name__ == "__main__":
    main()
