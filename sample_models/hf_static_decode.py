"""A transformers Llama decoding one token per call on a static KV cache. Graphs help.

The model is built from a config (random weights, nothing downloaded; needs
``pip install -e '.[examples]'``). A ``StaticCache`` keeps keys and values at fixed
addresses, and the position is a device tensor that the loop advances in place, so every
call has the same shapes and the same buffers: the step captures as it is. Needs the
script to keep running after launchprof's extra calls: the cache and the position must be
exactly as the loop left them.

    launchprof analyze sample_models/hf_static_decode.py --target step
"""

from __future__ import annotations

import argparse

import torch
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

model: LlamaForCausalLM
cache: StaticCache


@torch.no_grad()
def step(tokens: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
    out = model(input_ids=tokens, past_key_values=cache, cache_position=cache_position, use_cache=True)
    return out.logits[:, -1].argmax(-1, keepdim=True)


def main() -> None:
    global model, cache
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=1024, hidden_size=256, intermediate_size=688, num_hidden_layers=6,
        num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512,
    )
    model = LlamaForCausalLM(config).to(args.device).eval()
    cache = StaticCache(config=config, max_cache_len=args.prompt + args.steps + 8)
    prompt = torch.randint(0, config.vocab_size, (1, args.prompt), device=args.device)
    with torch.no_grad():  # the prompt fills the cache once, eagerly
        logits = model(input_ids=prompt, past_key_values=cache, cache_position=torch.arange(args.prompt, device=args.device)).logits
    tokens = logits[:, -1].argmax(-1, keepdim=True)
    position = torch.tensor([args.prompt], device=args.device)
    generated = []
    for _ in range(args.steps):
        tokens = step(tokens, position)
        position.add_(1)
        generated.append(tokens)  # expect: kept-output
    print("generated:", torch.cat(generated, dim=1)[0, -12:].tolist(), "position:", int(position))


if __name__ == "__main__":
    main()
