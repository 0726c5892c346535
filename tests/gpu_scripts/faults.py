"""Fault scenarios for launchprof's hardening tests (run by tests/test_gpu_faults.py).

    python faults.py MODE [K]

MODE: raise (the target raises at call K), exit (sys.exit(5) after K calls), abort and
segfault (the process dies at call K), assert (a device-side assert, a sticky CUDA error,
at call K), oom (the target allocates too much at call K), hang (the target sleeps
forever at call K), few (only K calls), never (the target is never called).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

import torch

MODE = sys.argv[1]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 10
calls = 0


def step(x: torch.Tensor) -> torch.Tensor:
    global calls
    calls += 1
    if calls == K:
        if MODE == "raise":
            raise ValueError(f"bad batch at call {K}")
        if MODE == "abort":
            os.kill(os.getpid(), signal.SIGABRT)
        if MODE == "segfault":
            ctypes.string_at(0)
        if MODE == "assert":
            idx = torch.tensor([10_000], device="cuda")
            return x[idx]  # out of range: device-side assert, the context is lost
        if MODE == "oom":
            return torch.empty(1 << 50, device="cuda")
        if MODE == "hang":
            time.sleep(3600)
    return torch.tanh(x) * 2 + 1


def main() -> None:
    x = torch.randn(1024, device="cuda")
    n = K if MODE == "few" else 120
    if MODE == "never":
        n = 0
    for i in range(n):
        y = step(x)
        if MODE == "exit" and i + 1 == K:
            sys.exit(5)
    torch.cuda.synchronize()
    print("finished", n)


if __name__ == "__main__":
    main()
