"""A transformers StaticCache decode step (issue 33's Llama case) on CPU: launchprof's extra
calls advance the cache's position and fill its rows; after the restore the script's own
next steps give what a plain run gives. Built from a config, no weights downloaded."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from launchprof.worker.observe import bind_arguments  # noqa: E402
from launchprof.worker.reach import reach  # noqa: E402
from launchprof.worker.saved_state import SavedState, changed_tensors, marked  # noqa: E402
from launchprof.worker.state_roots import step_roots  # noqa: E402


def _decoder():
    """(state, decode): a 2-layer Llama (hidden 64, vocab 100) and a StaticCache of 32
    positions, both globals of the step as a script holds them; one token per call, the
    position a tensor the caller advances in place."""
    from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=100, max_position_embeddings=64,
    )
    state = {"model": LlamaForCausalLM(config).eval(), "cache": StaticCache(config=config, max_cache_len=32)}

    @torch.no_grad()
    def decode(tok: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        out = state["model"](input_ids=tok, past_key_values=state["cache"], cache_position=pos, use_cache=True)
        return out.logits[:, -1]

    return state, decode


def _script(decode, tok, pos, steps: int, logits: list[torch.Tensor]) -> torch.Tensor:
    """The script's loop: feed back the argmax token, advance the position."""
    for _ in range(steps):
        out = decode(tok, pos)
        logits.append(out)
        tok = out.argmax(-1, keepdim=True)
        pos.add_(1)
    return tok


def test_a_static_cache_decode_goes_on_as_a_plain_run_after_the_extra_calls():
    _, plain = _decoder()
    expected: list[torch.Tensor] = []
    _script(plain, torch.tensor([[1]]), torch.tensor([0]), 8, expected)

    state, decode = _decoder()
    got: list[torch.Tensor] = []
    tok, pos = torch.tensor([[1]]), torch.tensor([0])
    tok = _script(decode, tok, pos, 1, got)  # the first call allocates the cache's tensors
    roots = step_roots(decode, [bind_arguments(decode, (tok, pos), {})])
    before = marked(reach(roots).tensors)
    tok = _script(decode, tok, pos, 1, got)  # a warm-up call: which tensors does a step mutate?
    mutated = set(changed_tensors(before))
    layer = state["cache"].layers[0]
    assert any(p.endswith("layers[0].cumulative_length") for p in mutated) and any(p.endswith("layers[0].keys") for p in mutated)

    saved = SavedState.take(step_roots(decode, [bind_arguments(decode, (tok, pos), {})]), mutated)
    keys = layer.keys
    for _ in range(3):  # launchprof's extra calls on this call's arguments
        decode(tok, pos)
    assert int(layer.cumulative_length) == 5  # they moved the cache on
    assert saved.restore() == []
    assert int(layer.cumulative_length) == 2 and layer.keys is keys and layer.is_initialized
    _script(decode, tok, pos, 6, got)
    assert len(got) == len(expected) == 8
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))


def test_the_walk_of_a_transformers_model_and_cache_covers_everything():
    _, decode = _decoder()
    tok, pos = torch.tensor([[1]]), torch.tensor([0])
    decode(tok, pos)
    reached = reach(step_roots(decode, [bind_arguments(decode, (tok, pos), {})]))
    paths = [p for p, _ in reached.tensors]
    assert "state['cache'].layers[1].values" in paths and "state['model'].model.layers.0.self_attn.q_proj.weight" in paths
    assert reached.uncovered == []
