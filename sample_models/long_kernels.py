"""A step of two large bf16 matrix products: few, long kernels. Graphs do not help.

Each call runs two 8192x8192 products (about 1.4 ms each on an H200). Launch cost is
invisible next to that, so replay is no faster, and can be slower.

    launchprof analyze sample_models/long_kernels.py --target step
"""

from __future__ import annotations

import argparse

import torch


def step(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a @ b) @ b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    torch.manual_seed(0)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16) / args.size**0.5
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    total = 0.0
    for _ in range(args.steps):
        total += float(step(a, b)[0, 0])
    print(f"checksum {total:.3f}")


if __name__ == "__main__":
    main()
