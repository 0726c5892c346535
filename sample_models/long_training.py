"""A long training loop: 100,000 steps of a small MLP. launchprof stops it once measured.

Each step is the forward pass, a hand-written backward pass and an SGD update of a 12-layer
ReLU MLP on a batch of 64 (no autograd: the step writes only its parameters, in place), about
110 small kernels, so eager execution is bound by launch cost. Run plainly, the loop takes
minutes; the measurement needs about 40 steps, and analyze stops the script at the next one
(``--run-to-end`` lets it finish). ``--steps N`` runs N steps (default 100,000), so that a
benchmark can time the first ones.

    launchprof analyze sample_models/long_training.py --target step
"""

from __future__ import annotations

import argparse

import torch

WIDTH, LAYERS, BATCH, LR = 256, 12, 64, 1e-3

weights: list[torch.Tensor]
biases: list[torch.Tensor]


@torch.no_grad()
def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    acts = [x]
    for w, b in zip(weights, biases, strict=True):
        acts.append(torch.relu(torch.addmm(b, acts[-1], w)))
    diff = acts[-1] - y
    loss = diff.square().mean()
    grad = diff * (2.0 / diff.numel())  # d loss / d output
    for i in reversed(range(LAYERS)):
        grad = grad * (acts[i + 1] > 0)  # back through the ReLU
        grad_w, grad_b = acts[i].T @ grad, grad.sum(0)
        grad = grad @ weights[i].T
        weights[i].sub_(grad_w, alpha=LR)
        biases[i].sub_(grad_b, alpha=LR)
    return loss


def main() -> None:
    global weights, biases
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    torch.manual_seed(0)
    weights = [torch.randn(WIDTH, WIDTH, device="cuda") / WIDTH**0.5 for _ in range(LAYERS)]
    biases = [torch.zeros(WIDTH, device="cuda") for _ in range(LAYERS)]
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.rand(BATCH, WIDTH, device="cuda")
    for _ in range(args.steps):
        loss = step(x, y)
    print(f"{args.steps} steps, final loss {float(loss):.5f}")


if __name__ == "__main__":
    main()
