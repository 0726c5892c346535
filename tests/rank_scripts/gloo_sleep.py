"""Two CPU ranks (gloo) that both sleep far longer than the test waits: for --timeout and Ctrl-C."""

import time

import torch.distributed as dist


def step(x):
    """The --target the tests name: defined, never called."""
    return x + 1


dist.init_process_group("gloo")
print(f"rank {dist.get_rank()} sleeping", flush=True)
time.sleep(300)
