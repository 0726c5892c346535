"""Issue 33's Llama case: greedy decode on a transformers StaticCache, one token per call,
``cache_position`` a device tensor the caller advances in place. A 2-layer Llama built from
a config (no download). The generated tokens go to the JSON file named by argv[1], so a test
can compare the script's result under ``launchprof analyze --target decode`` with a plain
run: launchprof's extra calls (capture warm-ups, validations, bursts) advance the cache, and
a cache left advanced ends in ``index_copy_(): index out of bounds``.
"""

from __future__ import annotations

import json
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

STEPS = 90
torch.manual_seed(0)
config = LlamaConfig(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    vocab_size=100, max_position_embeddings=128,
)
model = LlamaForCausalLM(config).cuda().eval()
cache = StaticCache(config=config, max_cache_len=96)


@torch.no_grad()
def decode(tok: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    out = model(input_ids=tok, past_key_values=cache, cache_position=pos, use_cache=True)
    return out.logits[:, -1].argmax(-1, keepdim=True)


tok = torch.ones(1, 1, dtype=torch.long, device="cuda")
pos = torch.zeros(1, dtype=torch.long, device="cuda")
tokens = []
for _ in range(STEPS):
    tok = decode(tok, pos).clone()
    pos.add_(1)
    tokens.append(int(tok))
with open(sys.argv[1], "w") as fh:
    json.dump({"tokens": tokens, "cache_length": int(cache.layers[0].cumulative_length)}, fh)
