"""A whole training step (MLP, cross-entropy, backward, AdamW(capturable=True)) called from a
loop that keeps the returned ``loss`` with its autograd graph and reads it after the loop
(tests/test_gpu_training_steps.py). Capture fails while the previous call's graph is alive;
launchprof detaches it for the measurement only, and the script must print what
`python train_keeps_loss.py` prints.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True)
batches = [(torch.randn(256, 512, device="cuda"), torch.randint(0, 10, (256,), device="cuda")) for _ in range(4)]
STEPS = 150


def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def main() -> None:
    loss = None
    for i in range(STEPS):
        x, y = batches[i % len(batches)]
        loss = step(x, y)  # keeps the graph until the next call returns
    print(f"steps {STEPS}")
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
