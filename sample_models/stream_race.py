"""A stream race: the side stream writes a staging buffer that the main stream reads
without waiting for it. Eager runs and the graph's replays usually get it right by luck;
the captured graph keeps no edge from the copy to the read.

    launchprof analyze sample_models/stream_race.py --target step
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
    y = staging * 2.0  # expect: stream-race
    main.wait_stream(side)  # the join comes too late for the read above
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
