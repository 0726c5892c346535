"""The fixed twin of stream_race.py: the main stream waits for the side stream's copy
before it reads the staging buffer, so the graph has the edge copy -> read. No hazards.

    launchprof analyze sample_models/stream_race_fixed.py --target step
"""

from __future__ import annotations

import torch

side = torch.cuda.Stream() if torch.cuda.is_available() else None
staging = torch.zeros(1024, 1024, device="cuda") if torch.cuda.is_available() else None


def step(x: torch.Tensor) -> torch.Tensor:
    main = torch.cuda.current_stream()
    side.wait_stream(main)  # fork
    with torch.cuda.stream(side):
        staging.copy_(x)  # the write, on the side stream
    main.wait_stream(side)  # join before the read: the copy is ordered first
    y = staging * 2.0
    return y + staging


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(1024, 1024, device="cuda")
    for _ in range(100):
        out = step(x)
        x = out / out.norm()
    print(float(out.sum()))


if __name__ == "__main__":
    main()
