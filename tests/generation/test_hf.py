"""HFGenerator on the tiny random-init model: layout, log-probs, determinism, stopping, padding."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
import torch

from reasongym.agents.common import token_logprobs
from reasongym.errors import ConfigError
from reasongym.generation import GenerationBatch, HFGenerator, SamplingParams
from reasongym.generation.kv_cache import dynamic_cache
from reasongym.generation.sampling import RowRNG, sample_tokens, top_p_filter
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model
from tests.conftest import TINY_SHAPE

PROMPTS = ["1+1=", "What is 12 * 7? Answer:", "x"]


@pytest.fixture(scope="module")
def tokenizer():
    return make_char_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return make_tiny_model(tokenizer, **TINY_SHAPE, seed=0)


@pytest.fixture(scope="module")
def generator(model, tokenizer) -> HFGenerator:
    return HFGenerator(model, tokenizer)


# --- SamplingParams validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens=0 is not allowed; expected an integer >= 1"),
        ({"temperature": -0.5}, "temperature=-0.5 is not allowed; expected a float >= 0 (0 means greedy)"),
        ({"top_p": 0.0}, "top_p=0.0 is not allowed; expected a float in (0, 1]"),
        ({"top_k": -1}, "top_k=-1 is not allowed; expected an integer >= 0 (0 means off)"),
        ({"n": 0}, "n=0 is not allowed; expected an integer >= 1"),
        ({"stop": "\n"}, "stop='\\n' must be a tuple of strings, e.g. stop=('\\n',)"),
        ({"stop": ("",)}, "stop=('',) is not allowed; expected non-empty strings"),
    ],
)
def test_sampling_params_reject_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SamplingParams(**kwargs)
    assert str(info.value) == message


def test_generation_package_does_not_import_torch() -> None:
    code = "import sys, reasongym.generation; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# --- layout and masks ---------------------------------------------------------------------------------


def test_batch_layout_and_masks(generator: HFGenerator, tokenizer) -> None:
    n = 3
    batch = generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=12, n=n, seed=0))
    rows = len(PROMPTS) * n
    assert batch.prompt_ids.shape == (rows, max(len(p) for p in PROMPTS))
    assert batch.completion_ids.shape == batch.completion_mask.shape == batch.logprobs.shape
    assert batch.completion_ids.shape[0] == rows and batch.completion_ids.shape[1] <= 12
    for row in range(rows):
        prompt = PROMPTS[row // n]  # GRPO group layout: a prompt's n samples are adjacent
        real = batch.prompt_mask[row].bool()
        assert tokenizer.decode(batch.prompt_ids[row][real].tolist()) == prompt
        assert not real[: batch.prompt_ids.shape[1] - len(prompt)].any()  # padding sits on the left
        mask = batch.completion_mask[row]
        length = int(mask.sum())
        assert mask[:length].all() and not mask[length:].any()  # ones, then zeros
        assert (batch.completion_ids[row, length:] == tokenizer.pad_token_id).all()
        assert (batch.logprobs[row, length:] == 0).all() and (batch.logprobs[row, :length] < 0).all()
    assert (
        batch.input_ids.shape
        == batch.attention_mask.shape
        == (rows, batch.completion_start + batch.logprobs.shape[1])
    )
    assert not batch.logprobs.requires_grad


def test_completions_match_batch_rows(generator: HFGenerator, tokenizer) -> None:
    params = SamplingParams(max_new_tokens=10, n=2, seed=5)
    batch = generator.generate_batch(PROMPTS, params)
    groups = generator.generate(PROMPTS, params)
    assert [len(group) for group in groups] == [2] * len(PROMPTS)
    flat = [c for group in groups for c in group]
    assert tuple(c.text for c in flat) == batch.texts
    for row, completion in enumerate(flat):
        length = int(batch.completion_mask[row].sum())
        assert list(completion.token_ids) == batch.completion_ids[row, :length].tolist()
        assert completion.text == tokenizer.decode(completion.token_ids, skip_special_tokens=True)
        assert len(completion.logprobs) == length


# --- log-probs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(max_new_tokens=16, n=2, seed=1),
        # Completion log-probs are under the raw model distribution whatever the sampling settings.
        SamplingParams(max_new_tokens=16, n=2, seed=2, temperature=0.6, top_k=20, top_p=0.9),
    ],
)
def test_logprobs_match_a_separate_forward_pass(
    generator: HFGenerator, model, params: SamplingParams
) -> None:
    batch = generator.generate_batch(PROMPTS, params)
    with torch.no_grad():
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
    torch.testing.assert_close(logp, batch.logprobs, atol=1e-4, rtol=0)


@pytest.mark.parametrize("extra", [{}, {"top_k": 20, "top_p": 0.9}])
def test_tempered_logprobs_are_what_a_tempered_forward_pass_gives(
    generator: HFGenerator, model, extra: dict
) -> None:
    # At T = 0.7 the sampler reports softmax(logits / 0.7)'s log-probs (before top-k/top-p, as the trainer
    # computes them), and the same draws as without the flag: only what is reported changes.
    params = SamplingParams(max_new_tokens=16, n=2, seed=3, temperature=0.7, tempered_logprobs=True, **extra)
    batch = generator.generate_batch(PROMPTS, params)
    raw = generator.generate_batch(PROMPTS, replace(params, tempered_logprobs=False))
    assert torch.equal(batch.completion_ids, raw.completion_ids)
    with torch.no_grad():
        tempered, _ = token_logprobs(
            model, batch.input_ids, batch.attention_mask, batch.completion_start, temperature=0.7
        )
    torch.testing.assert_close(tempered, batch.logprobs, atol=1e-4, rtol=0)
    assert float((batch.logprobs - raw.logprobs).abs().max()) > 1e-2  # the control: they are not the raw ones


def test_qwen2_architecture_generates_consistent_logprobs(tiny) -> None:
    qwen, tokenizer = tiny(arch="qwen2")
    batch = HFGenerator(qwen, tokenizer).generate_batch(PROMPTS, SamplingParams(max_new_tokens=8, seed=0))
    with torch.no_grad():
        logp, _ = token_logprobs(qwen, batch.input_ids, batch.attention_mask, batch.completion_start)
    torch.testing.assert_close(logp, batch.logprobs, atol=1e-4, rtol=0)


def test_kv_cache_writes_into_preallocated_buffers(generator: HFGenerator) -> None:
    # Guards the fast path: if a transformers upgrade changes the cache layout, this fails instead of
    # generation silently falling back to the slower concatenating cache.
    cache = dynamic_cache(generator.model, capacity=16)
    assert {type(layer).__name__ for layer in cache.layers} == {"PreallocatedLayer"}


# --- determinism and sampling ---------------------------------------------------------------------------


def test_greedy_is_deterministic(generator: HFGenerator) -> None:
    params = SamplingParams(max_new_tokens=20, temperature=0, n=2)
    first, second = generator.generate(PROMPTS, params), generator.generate(PROMPTS, params)
    assert first == second
    assert all(group[0] == group[1] for group in first)


def test_same_seed_same_samples_other_seed_other_samples(generator: HFGenerator) -> None:
    def texts(seed: int) -> list[str]:
        return list(
            generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=20, n=4, seed=seed)).texts
        )

    assert texts(7) == texts(7)
    assert texts(7) != texts(8)
    assert len(set(texts(7))) > 1  # the n samples of a prompt differ


@pytest.mark.parametrize("filters", [{"top_k": 1}, {"top_p": 1e-6}])
def test_tightest_filters_reduce_to_greedy(generator: HFGenerator, filters: dict) -> None:
    greedy = generator.generate(PROMPTS, SamplingParams(max_new_tokens=15, temperature=0))
    filtered = generator.generate(
        PROMPTS, SamplingParams(max_new_tokens=15, temperature=1.5, seed=3, **filters)
    )
    assert [[c.token_ids for c in g] for g in filtered] == [[c.token_ids for c in g] for g in greedy]


@pytest.mark.parametrize(
    ("probs", "top_p", "kept"),
    [
        ([0.5, 0.25, 0.125, 0.125], 0.5, [True, False, False, False]),
        ([0.5, 0.25, 0.125, 0.125], 0.6, [True, True, False, False]),
        ([0.125, 0.5, 0.125, 0.25], 0.8, [True, True, False, True]),  # ties: either 0.125 completes the set
        ([0.5, 0.25, 0.125, 0.125], 1.0, [True, True, True, True]),
    ],
)
def test_top_p_keeps_the_smallest_set_reaching_p(probs: list[float], top_p: float, kept: list[bool]) -> None:
    scores = top_p_filter(torch.tensor([probs]).log(), top_p)
    if probs[0] == 0.125:  # with tied tokens only the count is determined
        assert int(torch.isfinite(scores).sum()) == sum(kept)
    else:
        assert torch.isfinite(scores)[0].tolist() == kept


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_sampling_frequencies_follow_the_tempered_softmax(temperature: float) -> None:
    probs = torch.tensor([0.5, 0.3, 0.2])
    logits = probs.log().expand(20_000, 3)
    params = SamplingParams(temperature=temperature)
    rng = RowRNG([torch.Generator().manual_seed(0)], 1, 0)
    tokens, logp = sample_tokens(
        logits, params, rng, torch.arange(20_000), torch.ones(20_000, dtype=torch.bool)
    )
    expected = (probs ** (1 / temperature)) / (probs ** (1 / temperature)).sum()
    observed = torch.bincount(tokens, minlength=3).float() / tokens.numel()
    torch.testing.assert_close(observed, expected, atol=0.015, rtol=0)
    torch.testing.assert_close(logp, probs.log()[tokens])  # raw log-prob, not the tempered one


# --- stopping -------------------------------------------------------------------------------------------


def test_stop_string_ends_the_completion_and_is_included(generator: HFGenerator) -> None:
    reference = generator.generate(PROMPTS[:1], SamplingParams(max_new_tokens=30, temperature=0))[0][0]
    stop = reference.text[4:6]
    expected = reference.text[: reference.text.index(stop) + len(stop)]
    stopped = generator.generate(
        PROMPTS[:1], SamplingParams(max_new_tokens=30, temperature=0, stop=("@@@", stop))
    )
    completion = stopped[0][0]
    assert completion.text == expected
    assert completion.finish_reason == "stop"
    assert completion.token_ids == reference.token_ids[: len(expected)]  # one token per character


def test_length_finish_reason(generator: HFGenerator, tokenizer) -> None:
    batch = generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=3, temperature=0))
    lengths = batch.completion_mask.sum(dim=1).tolist()
    last_tokens = [
        row[length - 1] for row, length in zip(batch.completion_ids.tolist(), lengths, strict=True)
    ]
    expected = tuple("stop" if token == tokenizer.eos_token_id else "length" for token in last_tokens)
    assert batch.finish_reasons == expected
    assert "length" in batch.finish_reasons


def _force_eos(model, tokenizer, rows: list[int], at_step: int):
    """Make the LM head put all mass on EOS for ``rows`` at decode step ``at_step`` (0 is the prefill)."""
    calls = {"count": 0}

    def hook(module, args, output):
        if calls["count"] == at_step:
            output = output.clone()
            output[rows, -1, tokenizer.eos_token_id] = 1e4
        calls["count"] += 1
        return output

    return model.lm_head.register_forward_hook(hook)


def test_eos_stops_a_row_which_then_keeps_padding(generator: HFGenerator, model, tokenizer) -> None:
    handle = _force_eos(model, tokenizer, rows=[0], at_step=2)
    try:
        batch = generator.generate_batch(PROMPTS[:2], SamplingParams(max_new_tokens=8, temperature=0))
    finally:
        handle.remove()
    eos = tokenizer.eos_token_id
    assert batch.completion_ids[0, 2] == eos
    assert batch.completion_mask[0].tolist() == [1, 1, 1] + [0] * (batch.completion_ids.shape[1] - 3)
    assert (batch.completion_ids[0, 3:] == tokenizer.pad_token_id).all()
    assert batch.finish_reasons[0] == "stop" and "<eos>" not in batch.texts[0] and len(batch.texts[0]) == 2


def test_decoding_ends_early_when_every_row_is_done(generator: HFGenerator, model, tokenizer) -> None:
    handle = _force_eos(model, tokenizer, rows=[0, 1, 2], at_step=4)
    try:
        batch = generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=50, seed=0))
    finally:
        handle.remove()
    assert batch.completion_ids.shape[1] == 5
    assert batch.finish_reasons == ("stop",) * 3


def test_finished_rows_leave_the_batch_without_changing_the_others(
    generator: HFGenerator, model, tokenizer
) -> None:
    prompts = [*PROMPTS, "7-2="]
    params = SamplingParams(max_new_tokens=12, temperature=0)
    free = generator.generate_batch(prompts, params)
    rows_seen: list[int] = []
    seen = model.lm_head.register_forward_hook(lambda module, args, output: rows_seen.append(output.shape[0]))
    stop = _force_eos(model, tokenizer, rows=[0, 2], at_step=3)
    try:
        forced = generator.generate_batch(prompts, params)
    finally:
        stop.remove()
        seen.remove()
    # The prefill and 3 decode steps run all 4 rows; rows 0 and 2 then end and leave the cache.
    assert rows_seen == [4, 4, 4, 4] + [2] * 8
    assert forced.completion_mask[[0, 2]].sum(dim=1).tolist() == [4, 4]  # EOS is their 4th token
    assert torch.equal(forced.completion_ids[[1, 3]], free.completion_ids[[1, 3]])
    torch.testing.assert_close(forced.logprobs[[1, 3]], free.logprobs[[1, 3]], atol=1e-5, rtol=0)


# --- padding, chunking, model state ---------------------------------------------------------------------


def test_left_padding_does_not_change_greedy_output(generator: HFGenerator) -> None:
    params = SamplingParams(max_new_tokens=20, temperature=0)
    together = generator.generate(PROMPTS, params)
    alone = [generator.generate([prompt], params)[0] for prompt in PROMPTS]
    assert [[c.token_ids for c in g] for g in together] == [[c.token_ids for c in g] for g in alone]
    for got, want in zip(together, alone, strict=True):
        torch.testing.assert_close(
            torch.tensor(got[0].logprobs), torch.tensor(want[0].logprobs), atol=1e-4, rtol=0
        )


def test_greedy_matches_transformers_generate(model, tokenizer, generator: HFGenerator) -> None:
    ours = generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=20, temperature=0))
    inputs = tokenizer(PROMPTS, padding=True, return_tensors="pt")
    reference = model.generate(
        **inputs,
        do_sample=False,
        max_new_tokens=20,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    reference_completions = reference[:, inputs["input_ids"].shape[1] :]
    width = ours.completion_ids.shape[1]
    assert torch.equal(ours.completion_ids, reference_completions[:, :width])
    assert (reference_completions[:, width:] == tokenizer.pad_token_id).all()


def test_batch_size_chunks_give_the_same_greedy_batch(model, tokenizer, generator: HFGenerator) -> None:
    params = SamplingParams(max_new_tokens=10, temperature=0, n=2)
    whole = generator.generate_batch(PROMPTS, params)
    chunked = HFGenerator(model, tokenizer, batch_size=4).generate_batch(PROMPTS, params)
    # Chunks of 3 split groups of 2, so every row runs its own prompt: the cache is not shared.
    unshared = HFGenerator(model, tokenizer, batch_size=3).generate_batch(PROMPTS, params)
    assert isinstance(chunked, GenerationBatch)
    for other in (chunked, unshared):
        assert torch.equal(whole.completion_ids, other.completion_ids)
        assert torch.equal(whole.prompt_ids, other.prompt_ids)
    torch.testing.assert_close(whole.logprobs, unshared.logprobs, atol=1e-5, rtol=0)


def test_a_group_runs_its_prompt_once(model, generator: HFGenerator) -> None:
    rows: list[int] = []
    hook = model.register_forward_pre_hook(
        lambda _module, _args, kwargs: rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        generator.generate_batch(PROMPTS, SamplingParams(max_new_tokens=4, n=3, seed=0))
    finally:
        hook.remove()
    assert rows[0] == len(PROMPTS) and set(rows[1:]) == {3 * len(PROMPTS)}


def test_model_mode_is_restored(model, generator: HFGenerator) -> None:
    model.train()
    try:
        generator.generate(PROMPTS[:1], SamplingParams(max_new_tokens=2))
        assert model.training
    finally:
        model.eval()
    generator.generate(PROMPTS[:1], SamplingParams(max_new_tokens=2))
    assert not model.training


@pytest.mark.parametrize(
    ("prompts", "message"),
    [
        ([], "prompts=[] is not allowed; expected a non-empty sequence of strings"),
        ("1+1=", "prompts='1+1=' is not allowed; expected a non-empty sequence of strings"),
        ([""], "prompts[0]='' tokenizes to no tokens; need at least one"),
    ],
)
def test_bad_prompts_are_rejected(generator: HFGenerator, prompts, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        generator.generate(prompts, SamplingParams(max_new_tokens=2))
    assert str(info.value) == message


def test_bad_batch_size_is_rejected(model, tokenizer) -> None:
    with pytest.raises(ConfigError, match="batch_size=0 is not allowed"):
        HFGenerator(model, tokenizer, batch_size=0)


def test_prompt_seeds_make_each_prompts_samples_independent_of_the_others(generator: HFGenerator) -> None:
    # Issue 28, item 7: what evaluation needs so that a resume, batched otherwise, samples the same.
    params = SamplingParams(n=3, max_new_tokens=12, temperature=1.0)
    together = generator.generate(["What is 1?", "b", "Say cc"], replace(params, prompt_seeds=(1, 2, 3)))
    alone = generator.generate(["b"], replace(params, prompt_seeds=(2,)))
    swapped = generator.generate(["Say cc", "What is 1?"], replace(params, prompt_seeds=(3, 1)))
    texts = [[c.text for c in group] for group in together]
    assert [c.text for c in alone[0]] == texts[1]
    assert [[c.text for c in group] for group in swapped] == [texts[2], texts[0]]
    assert len(set(texts[0])) > 1  # sampled, not repeated
    with pytest.raises(ConfigError, match="prompt_seeds holds 1 seeds for 2 prompts"):
        generator.generate(["a", "b"], replace(params, prompt_seeds=(1,)))
