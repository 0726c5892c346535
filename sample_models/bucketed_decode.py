"""Bucketed LLM decode (the seeds' worked example): the batch changes every step, and
every varying value (token ids, cache slots, positions, lengths) is a device tensor.

A small transformer decode step over a static KV cache: each sequence owns one cache slot,
slot 0 is kept free for padding, attention is masked to each sequence's true length. Padded
rows (token 0, slot 0, position 0, length 0) write only the free slot and read nothing the
real rows read, so padding a call up to a capture size is safe.

    launchprof analyze sample_models/bucketed_decode.py --target step
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

DIM, HEADS, LAYERS, VOCAB, CACHE, SLOTS = 128, 4, 2, 512, 64, 33  # slot 0: padding only
SIZES = [3, 8, 5, 13, 8, 8, 16, 1, 2, 8, 21, 6]  # batch sizes of successive steps


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = torch.nn.RMSNorm(DIM)
        self.norm2 = torch.nn.RMSNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM, bias=False)
        self.out = torch.nn.Linear(DIM, DIM, bias=False)
        self.up = torch.nn.Linear(DIM, 4 * DIM, bias=False)
        self.down = torch.nn.Linear(4 * DIM, DIM, bias=False)
        self.register_buffer("k_cache", torch.zeros(SLOTS, HEADS, CACHE, DIM // HEADS))
        self.register_buffer("v_cache", torch.zeros(SLOTS, HEADS, CACHE, DIM // HEADS))

    def forward(self, x: torch.Tensor, slots: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 3, HEADS, DIM // HEADS).unbind(1)
        self.k_cache[slots, :, positions] = k  # each row writes its own slot, at its own position
        self.v_cache[slots, :, positions] = v
        att = F.scaled_dot_product_attention(q.unsqueeze(2), self.k_cache[slots], self.v_cache[slots], attn_mask=mask)
        x = x + self.out(att.reshape(b, DIM))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Decoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("steps", torch.arange(CACHE))

    def forward(self, tokens: torch.Tensor, slots: torch.Tensor, positions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # The true length is a device tensor; a padded row (length 0) attends to one position.
        mask = (self.steps < lengths.clamp(min=1).unsqueeze(1)).view(-1, 1, 1, CACHE)
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, slots, positions, mask)
        return self.head(x)


model: Decoder


def build() -> Decoder:
    global model
    torch.manual_seed(0)
    model = Decoder().cuda().eval()
    return model


def step(tokens: torch.Tensor, slots: torch.Tensor, positions: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(tokens, slots, positions, lengths)


def inputs(batch: int, clock: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One call's batch: token ids, cache slots, and positions and lengths from a step
    counter that stays on the device."""
    tokens = torch.randint(0, VOCAB, (batch,), device="cuda")
    slots = torch.arange(1, batch + 1, device="cuda")
    positions = clock.expand(batch).clone()
    return tokens, slots, positions, positions + 1


def main() -> None:
    build()
    clock = torch.zeros((), dtype=torch.long, device="cuda")
    total = torch.zeros((), device="cuda")
    for i in range(120):
        logits = step(*inputs(SIZES[i % len(SIZES)], clock))  # expect: dynamic-shape
        clock.add_(1).remainder_(CACHE)
        total += logits.float().mean()
    print("checksum:", float(total))


if __name__ == "__main__":
    main()
