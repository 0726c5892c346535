"""Targets of many shapes (run by tests/test_gpu_faults.py): `python targets.py MODE`.

none: returns None (mutates in place); nested: returns a dict of a tuple and a list, takes
keyword arguments; method: a bound method of a plain object (--target Runner.run);
module: an nn.Module (--target model); cpu: only CPU tensors; kworder: keyword arguments
in alternating order; inference: tensors made and mutated under torch.inference_mode().
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


def step_kw(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a * 2 + b


def step_inference(x: torch.Tensor, acc: torch.Tensor) -> torch.Tensor:
    acc.add_(x)  # an in-place update of an inference tensor
    return model(x) + acc


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
        elif MODE == "kworder":  # keyword order alternates; `a` is a new tensor each call
            a = torch.randn(32, 64, device="cuda")
            if _ % 2:
                step_kw(a=a, b=x)
            else:
                step_kw(b=x, a=a)
        elif MODE == "inference":
            with torch.inference_mode():
                if _ == 0:
                    acc = torch.zeros(32, 64, device="cuda")
                step_inference(torch.randn(32, 64, device="cuda"), acc)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
