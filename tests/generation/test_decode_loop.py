"""The lean decode loop (issue 56, item 5): looking at the finished rows every k steps, and the static KV cache,
sample the same tokens whatever k is (greedy and per-prompt seeds: the same as a look at every step, the loop
of earlier versions, which keeps its own stream for one seed: `reasongym.generation.sampling`)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import pytest
import torch

from reasongym.errors import ConfigError
from reasongym.generation import GenerationBatch, HFGenerator, SamplingParams
from reasongym.generation.sampling import RowRNG, inverse_cdf, sample_tokens
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model
from tests.conftest import TINY_SHAPE

PROMPTS = ["1+1=", "What is 12 * 7? Answer:", "x", "Say 3"]


@pytest.fixture(scope="module")
def tokenizer():
    return make_char_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    model = make_tiny_model(tokenizer, **TINY_SHAPE, seed=0)
    # A likelier EOS, so that rows end at different steps and leave the batch between the looks.
    with torch.no_grad():
        model.lm_head.weight[tokenizer.eos_token_id] *= 2.0
    return model


def _same(a: GenerationBatch, b: GenerationBatch) -> None:
    assert a.texts == b.texts
    assert a.finish_reasons == b.finish_reasons
    assert torch.equal(a.completion_ids, b.completion_ids)
    assert torch.equal(a.completion_mask, b.completion_mask)
    torch.testing.assert_close(a.logprobs, b.logprobs, atol=1e-5, rtol=0)


PARAMS = {
    "one seed": SamplingParams(n=4, max_new_tokens=24, temperature=1.0, seed=3),
    "prompt seeds": SamplingParams(n=4, max_new_tokens=24, temperature=1.0, prompt_seeds=(5, 6, 7, 8)),
    "greedy": SamplingParams(max_new_tokens=24, temperature=0),
    "top-p": SamplingParams(n=2, max_new_tokens=24, temperature=0.8, top_p=0.9, seed=1),
}


@pytest.mark.parametrize("name", sorted(PARAMS))
@pytest.mark.parametrize("every", [3, 8, 64])
def test_looking_every_k_steps_samples_the_same_tokens(model, tokenizer, name: str, every: int) -> None:
    params = PARAMS[name]
    every_other = HFGenerator(model, tokenizer, sync_every=2).generate_batch(PROMPTS, params)
    if name != "greedy":  # rows end at different steps, so they leave the batch between the looks
        assert len({int(length) for length in every_other.completion_mask.sum(dim=1)}) > 1
    _same(HFGenerator(model, tokenizer, sync_every=every).generate_batch(PROMPTS, params), every_other)
    if name in ("greedy", "prompt seeds"):  # no stream of one generator: the loop of earlier versions too
        _same(HFGenerator(model, tokenizer, sync_every=1).generate_batch(PROMPTS, params), every_other)


def test_fewer_looks_mean_fewer_host_synchronisations(model, tokenizer, monkeypatch) -> None:
    looks: list[str] = []  # the decode loop's reads of device values on the host (bool() and int())

    def counting(name: str) -> None:
        original = getattr(torch.Tensor, name)

        def counted(self: torch.Tensor) -> object:
            if sys._getframe(1).f_code.co_filename.endswith(os.path.join("generation", "hf.py")):
                looks.append(name)
            return original(self)

        monkeypatch.setattr(torch.Tensor, name, counted)

    counting("__bool__")
    counting("__int__")
    params = replace(PARAMS["one seed"], max_new_tokens=32)
    HFGenerator(model, tokenizer, sync_every=1).generate_batch(PROMPTS, params)
    every_step, looks[:] = len(looks), []
    HFGenerator(model, tokenizer, sync_every=8).generate_batch(PROMPTS, params)
    assert 0 < len(looks) <= every_step / 4


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_static_cache_samples_what_the_dynamic_cache_samples(model, tokenizer, name: str) -> None:
    params = PARAMS[name]
    dynamic = HFGenerator(model, tokenizer, sync_every=4).generate_batch(PROMPTS, params)
    static = HFGenerator(model, tokenizer, static_cache=True).generate_batch(PROMPTS, params)
    _same(static, dynamic)


def test_static_cache_keeps_every_row_in_the_forward_pass(model, tokenizer) -> None:
    rows_seen: list[int] = []
    hook = model.lm_head.register_forward_hook(lambda module, args, output: rows_seen.append(output.shape[0]))
    try:
        HFGenerator(model, tokenizer, static_cache=True).generate_batch(PROMPTS, PARAMS["one seed"])
    finally:
        hook.remove()
    assert set(rows_seen) == {16}


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_per_row_draws_follow_the_tempered_softmax(temperature: float) -> None:
    probs = torch.tensor([0.5, 0.3, 0.2])
    logits = probs.log().expand(20_000, 3)
    rng = RowRNG([torch.Generator().manual_seed(0)], 1, 0, chunk_rows=20_000)
    rows = torch.arange(20_000)
    tokens, _ = sample_tokens(logits, SamplingParams(temperature=temperature), rng, rows, rows >= 0)
    expected = (probs ** (1 / temperature)) / (probs ** (1 / temperature)).sum()
    observed = torch.bincount(tokens, minlength=3).float() / tokens.numel()
    torch.testing.assert_close(observed, expected, atol=0.015, rtol=0)


def test_inverse_cdf_never_picks_a_token_of_probability_zero() -> None:
    probs = torch.tensor([[0.0, 0.5, 0.0, 0.5, 0.0]]).expand(5, 5)
    uniform = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0 - 2**-24])
    assert inverse_cdf(probs, uniform).tolist() == [1, 1, 3, 3, 3]


def test_bad_sync_every_is_rejected(model, tokenizer) -> None:
    with pytest.raises(ConfigError, match=r"sync_every=0 is not allowed; expected an integer >= 1 or None"):
        HFGenerator(model, tokenizer, sync_every=0)


def test_the_static_cache_is_reused_emptied_across_calls_of_the_same_shape(model, tokenizer) -> None:
    static = HFGenerator(model, tokenizer, static_cache=True)
    dynamic = HFGenerator(model, tokenizer, sync_every=4)
    first = static.generate_batch(PROMPTS, PARAMS["one seed"])
    cache = static._static[1]
    again = replace(PARAMS["one seed"], seed=11)
    _same(static.generate_batch(PROMPTS, again), dynamic.generate_batch(PROMPTS, again))
    assert static._static[1] is cache  # the same buffers: CUDA graphs captured on them stay valid
    _same(static.generate_batch(PROMPTS, PARAMS["one seed"]), first)
