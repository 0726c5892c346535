"""Targets of many shapes (run by tests/test_gpu_faults.py): `python targets.py MODE`.

none: returns None (mutates in place); nested: returns a dict of a tuple and a list, takes
keyword arguments; method: a bound method of a plain object (--target Runner.run);
module: an nn.Module (--target model); cpu: only CPU tensors.
"""

from __future__ import annotations

import sys

import torch

MODE = sys.argv[1]


def step_none(x: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(torch.sin(x) + 1)


def step_nested(x: torch.Tensor, *, scale: torch.Tensor, extra: list[torch.Tensor]) -> dict:
    y = x * scale
    return {"pair": (y, y + 1), "list": [y + e for e in extra], "count": 3}


class Runner:
    def __init__(self) -> None:
        self.w = torch.randn(64, 64, device="cuda")

    def run(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.w)


model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 64)).cuda()


def step_cpu(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sum(0)


def main() -> None:
    x = torch.randn(32, 64, device="cuda")
    runner = Runner()
    out = torch.empty_like(x)
    for _ in range(100):
        if MODE == "none":
            step_none(x, out)
        elif MODE == "nested":
            step_nested(x, scale=torch.tensor(2.0, device="cuda"), extra=[x, x])
        elif MODE == "method":
            runner.run(x)
        elif MODE == "module":
            with torch.no_grad():
                model(x)
        elif MODE == "cpu":
            step_cpu(torch.randn(32, 64))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
