"""Noise drawn with numpy inside the step: the graph replays the captured numbers forever.

    launchprof analyze sample_models/numpy_rng.py --target step
"""

from __future__ import annotations

import numpy as np
import torch

noise_buffer = torch.zeros(1024, device="cuda") if torch.cuda.is_available() else None


def step(x: torch.Tensor) -> torch.Tensor:
    noise = np.random.normal(size=1024).astype("float32")  # expect: rng-state
    noise_buffer.copy_(torch.from_numpy(noise), non_blocking=True)  # expect: pageable-copy
    return x + noise_buffer


def main() -> None:
    x = torch.zeros(1024, device="cuda")
    for _ in range(100):
        y = step(x)
    print(float(y.std()))


if __name__ == "__main__":
    main()
