"""Two CPU ranks (gloo): one all-reduce together, then rank 1's script exits with status 3 and
rank 0 carries on alone and ends normally."""

import sys

import torch
import torch.distributed as dist



def step(x):
    """The --target the tests name: defined, never called, so the worker measures nothing on CPU."""
    return x + 1


dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4) * (rank + 1)
dist.all_reduce(t)
print(f"rank {rank} all_reduce {t.tolist()}", flush=True)
if rank == 1:
    sys.exit(3)
x = torch.randn(64, 64)
for _ in range(5):
    x = torch.tanh(x @ x.T / 64)
print(f"rank {rank} done {float(x.sum()):.3f}", flush=True)
