"""A next-token step of a small transformers GPT-2. Graphs help; nothing to fix.

The model is built from a config (random weights, nothing downloaded; needs
``pip install -e '.[examples]'``). Each call makes its own cache object, masks and output
collections inside the library: state that no caller can reach once the call returns,
so none of it is a host side effect.

    launchprof analyze sample_models/hf_gpt2_step.py --target step
"""

from __future__ import annotations

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel

model: GPT2LMHeadModel


@torch.no_grad()
def step(input_ids: torch.Tensor) -> torch.Tensor:
    logits = model(input_ids=input_ids).logits
    return logits[:, -1].argmax(-1)


def main() -> None:
    global model
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=1024, n_positions=128, n_embd=256, n_layer=4, n_head=4, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).to(args.device).eval()
    input_ids = torch.randint(0, config.vocab_size, (args.batch, args.length), device=args.device)
    for _ in range(args.steps):
        next_tokens = step(input_ids)
        input_ids = torch.cat([input_ids[:, 1:], next_tokens[:, None]], dim=1)  # a sliding window: same shape every call
    print("last tokens:", input_ids[:, -4:].tolist())


if __name__ == "__main__":
    main()
