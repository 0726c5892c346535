"""A capturable small step (6 small kernels) for --compare compile (tests/test_gpu_compile.py).

With LAUNCHPROF_DIRECT_OUT set, launchprof's own compiled step is timed by a plain loop
right after launchprof times it, and after the loop the step is compiled afresh and timed
in this process (compile_direct.py). The script prints RESULT <checksum>: launchprof's extra
calls must leave it as `python compile_step.py` prints it. The step mutates nothing: under
reduce-overhead a mutated argument would make compile skip its CUDA graphs.
"""

from __future__ import annotations

import os

import torch

from compile_direct import measure, time_launchprofs_compiled, write

torch.manual_seed(0)
W = torch.randn(64, 64, device="cuda")


def step(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x @ W)  # 2 kernels
    h = h * scale + bias  # 2
    return torch.tanh(h) - shift  # 2


RAW_STEP = step  # under launchprof already the hook's stand-in: compile_direct.measure unwraps it


def main() -> None:
    same_object = time_launchprofs_compiled() if os.environ.get("LAUNCHPROF_DIRECT_OUT") else {}
    g = torch.Generator(device="cuda").manual_seed(1)
    total = torch.zeros((), device="cuda")
    sets = []
    for i in range(80):
        x = torch.randn(32, 64, device="cuda", generator=g)
        scale = torch.rand(1, device="cuda", generator=g)
        bias = torch.randn(32, 64, device="cuda", generator=g)
        shift = torch.randn(32, 64, device="cuda", generator=g)
        total += step(x, scale, bias, shift).sum()
        if i < 4:
            sets.append(((x, scale, bias, shift), {}))
    print(f"RESULT {float(total):.6f}", flush=True)
    out = os.environ.get("LAUNCHPROF_DIRECT_OUT")
    if out:
        write(out, {**measure(RAW_STEP, sets, lambda: None), "same_object": same_object})


if __name__ == "__main__":
    main()
