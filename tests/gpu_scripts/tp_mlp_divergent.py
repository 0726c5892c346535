"""sample_models/tp_mlp.py's step with a branch on the rank: rank 1 scales one layer's
activations, an extra kernel rank 0 never launches. The collectives still match (the eager
step runs), but the kernel sequences differ between ranks: collective-divergence.

    launchprof analyze --nproc-per-node 2 tests/gpu_scripts/tp_mlp_divergent.py --target step
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_models"))
import tp_mlp  # noqa: E402


def step(x: torch.Tensor, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    for i, (w1, w2) in enumerate(layers):
        h = torch.nn.functional.gelu(x @ w1)
        if i == 1 and dist.get_rank() == 1:  # a branch taken on one rank only
            h = h * 0.5
        y = h @ w2
        dist.all_reduce(y)
        x = x + y
    return x


def main() -> None:
    problem = tp_mlp.launch_problem()
    if problem:
        sys.exit(problem)
    rank, world, device = tp_mlp.setup()
    layers = tp_mlp.build(rank, world, device)
    torch.manual_seed(1)
    for _ in range(tp_mlp.CALLS):
        step(torch.randn(tp_mlp.BATCH, tp_mlp.HIDDEN, device=device, dtype=tp_mlp.DTYPE), layers)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
