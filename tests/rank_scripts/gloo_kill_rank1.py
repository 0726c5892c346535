"""Two CPU ranks (gloo): rank 1's process is killed (SIGKILL, as the OOM killer would) while
rank 0 sleeps; torch's launcher then stops rank 0."""

import os
import signal
import time

import torch.distributed as dist



def step(x):
    """The --target the tests name: defined, never called, so the worker measures nothing on CPU."""
    return x + 1


dist.init_process_group("gloo")
if dist.get_rank() == 1:
    print("rank 1 about to die", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(120)
