"""A small-batch LLM decode loop: hundreds of tiny kernels per step. Graphs help.

Each step runs 8 transformer layers on a batch of 4 tokens: RMSNorm, small Q/K/V and
output projections, attention over a fixed-size KV cache written in place at a position
kept in a device tensor, and a GELU MLP. Every kernel is a few microseconds, so eager
execution is bound by launch cost and the GPU idles between kernels.

    launchprof analyze sample_models/decode_loop.py --target step
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

DIM, HEADS, LAYERS, VOCAB, CACHE = 256, 4, 8, 1024, 128


class Layer(torch.nn.Module):
    def __init__(self, batch: int) -> None:
        super().__init__()
        self.norm1 = torch.nn.RMSNorm(DIM)
        self.norm2 = torch.nn.RMSNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM, bias=False)
        self.out = torch.nn.Linear(DIM, DIM, bias=False)
        self.up = torch.nn.Linear(DIM, 4 * DIM, bias=False)
        self.down = torch.nn.Linear(4 * DIM, DIM, bias=False)
        self.register_buffer("k_cache", torch.zeros(batch, HEADS, CACHE, DIM // HEADS))
        self.register_buffer("v_cache", torch.zeros(batch, HEADS, CACHE, DIM // HEADS))

    def forward(self, x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 3, HEADS, 1, DIM // HEADS).unbind(1)
        self.k_cache.index_copy_(2, pos, k)  # position stays on the device: no frozen scalar
        self.v_cache.index_copy_(2, pos, v)
        att = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        x = x + self.out(att.reshape(b, DIM))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Decoder(torch.nn.Module):
    def __init__(self, batch: int) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.layers = torch.nn.ModuleList(Layer(batch) for _ in range(LAYERS))
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("positions", torch.arange(CACHE))

    def forward(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        mask = (self.positions <= pos).view(1, 1, 1, CACHE)
        for layer in self.layers:
            x = layer(x, pos, mask)
        return self.head(x)


model: Decoder


@torch.no_grad()
def step(tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    return model(tokens, pos)


def main() -> None:
    global model
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=140)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Decoder(args.batch).cuda().eval()
    tokens = torch.randint(0, VOCAB, (args.batch,), device="cuda")
    pos = torch.zeros(1, dtype=torch.long, device="cuda")
    for _ in range(args.steps):
        logits = step(tokens, pos)
        tokens = logits.argmax(-1)  # a new tensor every step: launchprof copies it in
        pos.add_(1).remainder_(CACHE)
    print("last tokens:", tokens.tolist())


if __name__ == "__main__":
    main()
