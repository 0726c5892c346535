"""A whole training step (forward, loss, backward, AdamW) whose caller keeps the loss.

The step is the PyTorch docs' whole-network capture: ``zero_grad``, forward, cross-entropy,
``backward``, ``AdamW(capturable=True).step()``. Nothing in it reads the GPU from the host.
But the loop keeps each call's ``loss``, and with it that call's autograd graph: its
AccumulateGrad nodes stay bound to the stream they ran on, and the next capture fails
(``cudaErrorStreamCaptureImplicit`` on older torch). ``del loss`` before the next call, or
returning ``loss.detach()``, fixes it; the step then replays far faster than it runs.

    launchprof analyze sample_models/train_step_keeps_loss.py --target train_step
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

WIDTH, DEPTH, CLASSES = 512, 6, 10

model: torch.nn.Module
opt: torch.optim.Optimizer



def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def main() -> None:
    global model, opt
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.LayerNorm(WIDTH), torch.nn.GELU()) for _ in range(DEPTH)]
    model = torch.nn.Sequential(*blocks, torch.nn.Linear(WIDTH, CLASSES)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
    batches = [(torch.randn(args.batch, WIDTH, device="cuda"), torch.randint(0, CLASSES, (args.batch,), device="cuda")) for _ in range(4)]
    for i in range(args.steps):
        x, y = batches[i % len(batches)]
        loss = train_step(x, y)  # expect: kept-autograd-graph
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
