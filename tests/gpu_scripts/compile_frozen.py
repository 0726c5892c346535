"""A step with a frozen Python scalar (sample_models/frozen_scalar.py's update) for --compare
compile: hand capture freezes `lr`; compile recompiles on it and stays correct.

With LAUNCHPROF_DIRECT_OUT set, launchprof's own compiled step is timed by a plain loop
right after launchprof times it, and after the loop the step is compiled afresh and timed
in this process (compile_direct.py), cycling through 4 learning rates as the loop does.
RESULT <norm> must match `python compile_frozen.py`.
"""

from __future__ import annotations

import os

import torch

from compile_direct import measure, time_launchprofs_compiled, write


def update(param: torch.Tensor, grad: torch.Tensor, lr: float) -> torch.Tensor:
    param.add_(grad, alpha=-lr)  # lr changes every call: frozen in a hand-captured graph
    return param.norm()


RAW_UPDATE = update


def main() -> None:
    same_object = time_launchprofs_compiled() if os.environ.get("LAUNCHPROF_DIRECT_OUT") else {}
    torch.manual_seed(0)
    param = torch.randn(4096, device="cuda")
    grad = torch.randn(4096, device="cuda")
    lr = 0.1
    for _ in range(100):
        update(param, grad, lr)
        lr *= 0.98
    print(f"RESULT {float(param.norm()):.6f}", flush=True)
    out = os.environ.get("LAUNCHPROF_DIRECT_OUT")
    if out:
        saved = param.clone()
        sets = [((param, grad, 0.1 * 0.98**i), {}) for i in range(4)]
        write(out, {**measure(RAW_UPDATE, sets, lambda: param.copy_(saved)), "same_object": same_object})


if __name__ == "__main__":
    main()
