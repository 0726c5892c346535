"""A tensor-parallel MLP decode step on 2 GPUs: 4 layers, each ending in an all-reduce (NCCL).

    launchprof analyze --nproc-per-node 2 sample_models/tp_mlp.py --target step
    torchrun --nproc-per-node 2 sample_models/tp_mlp.py          # the script alone

Each rank holds half of every layer (Megatron style: the first matrix split by columns, the
second by rows), so each layer's partial outputs are summed across the ranks by one
``all_reduce``. NCCL's collectives are captured into the graph like any kernel, so a replay
runs all 4 all-reduces with one launch per rank. On the lent H200 machines NVLink multicast
must be off (``NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1``
in the environment; launchprof passes the environment to every rank unchanged).
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

HIDDEN = 1024
FFN = 4 * HIDDEN
LAYERS = 4
BATCH = 8
CALLS = 80
DTYPE = torch.bfloat16


def step(x: torch.Tensor, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    for w1, w2 in layers:
        h = torch.nn.functional.gelu(x @ w1)  # this rank's columns of the first matrix
        y = h @ w2  # this rank's rows of the second: a partial sum
        dist.all_reduce(y)  # the sum over the ranks: every rank holds the layer's output
        x = x + y
    return x


def build(rank: int, world: int, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """This rank's shards of every layer; the full weights are the same on every rank (seed 0)."""
    torch.manual_seed(0)
    shard = FFN // world
    layers = []
    for _ in range(LAYERS):
        w1 = torch.randn(HIDDEN, FFN, device=device, dtype=DTYPE) / HIDDEN**0.5
        w2 = torch.randn(FFN, HIDDEN, device=device, dtype=DTYPE) / FFN**0.5
        cols = slice(rank * shard, (rank + 1) * shard)
        layers.append((w1[:, cols].contiguous(), w2[cols, :].contiguous()))
    return layers


def launch_problem() -> str | None:
    """Why this process cannot run the step, in one line, or None."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    found = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if "LOCAL_RANK" not in os.environ or world < 2:
        return "tp_mlp.py runs on 2 ranks: start it with `torchrun --nproc-per-node 2 sample_models/tp_mlp.py` or `launchprof analyze --nproc-per-node 2 sample_models/tp_mlp.py --target step`"
    if found < world:
        return f"tp_mlp.py needs {world} CUDA GPUs (one per rank) and found {found}"
    return None


def setup() -> tuple[int, int, torch.device]:
    """Join the process group the launcher describes; this rank's GPU."""
    local = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    return dist.get_rank(), dist.get_world_size(), device


def main() -> None:
    problem = launch_problem()
    if problem:
        sys.exit(problem)
    rank, world, device = setup()
    layers = build(rank, world, device)
    torch.manual_seed(1)  # the same tokens on every rank
    for _ in range(CALLS):
        tokens = torch.randn(BATCH, HIDDEN, device=device, dtype=DTYPE)
        out = step(tokens, layers)
    if rank == 0:
        print(f"tp_mlp: {world} ranks, last output norm {out.float().norm().item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
