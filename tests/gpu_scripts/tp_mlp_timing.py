"""The plainest timing of sample_models/tp_mlp.py's step, for tests/test_gpu_ranks.py: run
under ``torchrun --nproc-per-node 2 tests/gpu_scripts/tp_mlp_timing.py OUTDIR``, no launchprof
code. Each rank times its step eagerly and as a hand-captured CUDA graph (copy_ the tokens into
the static input, replay), each call after a barrier and a synchronisation (the ranks start
every call together, as launchprof's bursts do), median of 60; it writes
``OUTDIR/direct.rankN.json`` with ``eager_us``, ``replay_us`` and the graph's output check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_models"))
import tp_mlp  # noqa: E402
from direct_loop import median_us  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    rank, world, device = tp_mlp.setup()
    layers = tp_mlp.build(rank, world, device)
    torch.manual_seed(1)
    tokens = torch.randn(tp_mlp.BATCH, tp_mlp.HIDDEN, device=device, dtype=tp_mlp.DTYPE)
    for _ in range(5):
        tp_mlp.step(tokens, layers)
    eager = median_us(lambda: tp_mlp.step(tokens, layers), before=dist.barrier)
    static = tokens.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            tp_mlp.step(static, layers)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = tp_mlp.step(static, layers)

    def replay() -> None:
        static.copy_(tokens)
        graph.replay()

    for _ in range(5):
        replay()
    replay_us = median_us(replay, before=dist.barrier)
    replay()
    torch.cuda.synchronize()
    same = bool(torch.allclose(static_out.float(), tp_mlp.step(tokens, layers).float(), rtol=1e-2, atol=1e-2))
    (out / f"direct.rank{rank}.json").write_text(json.dumps({"eager_us": eager, "replay_us": replay_us, "replay_matches": same}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
