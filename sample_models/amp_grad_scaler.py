"""A mixed-precision training step with ``torch.amp.GradScaler``: not capturable as a whole.

``scaler.step(opt)`` reads ``found_inf`` on the host to decide whether to skip the optimizer
step, and a host read cannot be captured. Two ways out, which gain very different amounts:
bf16 autocast needs no scaler, and then the whole step captures; or capture forward and
backward only (``torch.cuda.make_graphed_callables``) and keep ``scaler.step``/``update``
outside the graph, which leaves the scaler and the optimizer eager.

    launchprof analyze sample_models/amp_grad_scaler.py --target train_step
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

WIDTH, DEPTH, CLASSES = 512, 6, 10

model: torch.nn.Module
opt: torch.optim.Optimizer
scaler: torch.amp.GradScaler



def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)  # expect: grad-scaler
    scaler.update()
    return loss.detach()


def main() -> None:
    global model, opt, scaler
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.LayerNorm(WIDTH), torch.nn.GELU()) for _ in range(DEPTH)]
    model = torch.nn.Sequential(*blocks, torch.nn.Linear(WIDTH, CLASSES)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    batches = [(torch.randn(args.batch, WIDTH, device="cuda"), torch.randint(0, CLASSES, (args.batch,), device="cuda")) for _ in range(4)]
    for i in range(args.steps):
        x, y = batches[i % len(batches)]
        loss = train_step(x, y)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
