"""A recurrent step whose hidden state loops back into the next call: loop-back advice.

Each call runs a GRU cell and a small output head on one time step and returns the new
hidden state, which the loop passes straight back in (``logits, h = step(x[t], h)``). Nothing
keeps the outputs past the next call, so no clone is needed and no warning is given. Under
a graph the state would be copied into the static input every call; launchprof names the
argument (info), gives that copy's measured cost, and shows the in-place form: keep ``h`` in
a static buffer that the captured step updates with ``h_static.copy_(h_new)``.

    launchprof analyze sample_models/recurrent_state.py --target step
"""

from __future__ import annotations

import argparse

import torch

IN, HIDDEN, OUT = 128, 512, 64


class Cell(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = torch.nn.GRUCell(IN, HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, OUT)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.gru(x, h)
        return self.head(torch.tanh(h)), h


cell: Cell


@torch.no_grad()
def step(x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return cell(x, h)


def main() -> None:
    global cell
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    torch.manual_seed(0)
    cell = Cell().cuda().eval()
    xs = torch.randn(args.steps, args.batch, IN, device="cuda")
    h = torch.zeros(args.batch, HIDDEN, device="cuda")
    total = torch.zeros((), device="cuda")
    for t in range(args.steps):
        logits, h = step(xs[t], h)
        total += logits.square().mean()
    print("mean square of logits:", float(total) / args.steps)


if __name__ == "__main__":
    main()
