"""A decode loop that keeps every step's logits, then stacks them: kept-output.

Each step runs a few small layers on a batch of tokens and returns the logits. The loop
appends them to ``history`` and stacks the list at the end. Eagerly that is correct. Under a
hand-written CUDA graph each replay writes the same static output buffer, so every entry of
``history`` would alias it and the stack would hold the last step's logits N times. The fix
is ``history.append(logits.clone())`` (launchprof says what that clone costs per call).

    launchprof analyze sample_models/decode_keeps_outputs.py --target step
"""

from __future__ import annotations

import argparse

import torch

DIM, VOCAB, LAYERS = 256, 1024, 4


class Decoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(DIM, DIM) for _ in range(LAYERS))
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = x + torch.nn.functional.gelu(layer(x))
        return self.head(x)


model: Decoder


@torch.no_grad()
def step(tokens: torch.Tensor) -> torch.Tensor:
    return model(tokens)


def main() -> None:
    global model
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder().cuda().eval()
    tokens = torch.randint(0, VOCAB, (args.batch,), device="cuda")
    history = []
    for _ in range(args.steps):
        logits = step(tokens)
        history.append(logits)  # expect: kept-output
        tokens = logits.argmax(-1)
    stacked = torch.stack(history)
    print("logits:", tuple(stacked.shape), "checksum", float(stacked.float().sum()))


if __name__ == "__main__":
    main()
