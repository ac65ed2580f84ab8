"""The real pretrained SmolLM2-135M-Instruct (GGUF, BPE tokenizer, chat template) through loading and sampling.

Skips when the GGUF file is absent (fixture ``smollm2_gguf``). The model is dequantized once per session
(fixture ``smollm2``); generations stay short so that the file runs in about a minute on two cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import reasongym
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.policy.loading import end_of_turn_id, format_prompt, load_policy, save_policy

# Prompts of different lengths, so batches are left-padded; SmolLM2 answers each in under 40 tokens.
SHORT_QUESTIONS = (
    "What is 2+3?",
    "What is the capital of France?",
    "Reply with one word: yes or no. Is water wet?",
)


def test_gguf_loads_as_a_plain_float32_model_with_its_chat_template(smollm2) -> None:
    model, tokenizer = smollm2
    assert type(model).__name__ == "LlamaForCausalLM"
    assert model.dtype == torch.float32
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    # Nothing of the GGUF quantization is left: the model saves and trains like any other.
    assert getattr(model.config, "quantization_config", None) is None
    assert getattr(model, "hf_quantizer", None) is None
    assert "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.convert_ids_to_tokens([tokenizer.eos_token_id, tokenizer.pad_token_id]) == [
        "<|im_end|>",
        "<|im_end|>",
    ]
    assert tokenizer.padding_side == "left"
    assert end_of_turn_id(tokenizer) == tokenizer.convert_tokens_to_ids("<|im_end|>") == 2
    assert model.generation_config.eos_token_id == 2


@pytest.mark.parametrize(
    ("env_id", "env_kwargs"),
    [
        ("reasongym/Arithmetic-v0", {}),
        ("reasongym/Arithmetic-v0", {"system_prompt": "You are a careful calculator."}),
        ("reasongym/Countdown-v0", {}),
    ],
)
def test_prompt_ids_are_the_chat_template_ids(smollm2, env_id: str, env_kwargs: dict) -> None:
    model, tokenizer = smollm2
    env = reasongym.make(env_id, **env_kwargs).unwrapped
    messages = [env.messages(env.problem_at(index)) for index in range(2)]
    batch = HFGenerator(model, tokenizer).generate_batch(
        [format_prompt(tokenizer, m) for m in messages], SamplingParams(temperature=0, max_new_tokens=1)
    )
    for row, chat in enumerate(messages):
        expected = tokenizer.apply_chat_template(chat, add_generation_prompt=True)["input_ids"]
        sampled = batch.prompt_ids[row][batch.prompt_mask[row].bool()].tolist()
        assert sampled == expected
        assert expected[0] == tokenizer.convert_tokens_to_ids("<|im_start|>")  # once: no extra BOS


def test_generation_stops_at_the_end_of_turn_token(smollm2) -> None:
    model, tokenizer = smollm2
    prompts = [format_prompt(tokenizer, q) for q in SHORT_QUESTIONS]
    batch = HFGenerator(model, tokenizer).generate_batch(
        prompts, SamplingParams(temperature=0, max_new_tokens=48)
    )
    lengths = batch.completion_mask.sum(dim=1).tolist()
    assert batch.finish_reasons == ("stop",) * 3
    for row, length in enumerate(lengths):
        assert batch.completion_ids[row, length - 1].item() == tokenizer.convert_tokens_to_ids("<|im_end|>")
        assert "<|im_end|>" not in batch.texts[row] and "<|im_start|>" not in batch.texts[row]
    assert batch.texts[0].endswith("5") and "Paris" in batch.texts[1]


def test_greedy_sampler_equals_model_generate_token_for_token(smollm2) -> None:
    model, tokenizer = smollm2
    prompts = [format_prompt(tokenizer, q) for q in (*SHORT_QUESTIONS, "Write a haiku about the sea.")]
    ours = HFGenerator(model, tokenizer).generate_batch(
        prompts, SamplingParams(temperature=0, max_new_tokens=24)
    )
    inputs = tokenizer(prompts, padding=True, add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        theirs = model.generate(**inputs, do_sample=False, max_new_tokens=24)
    assert torch.equal(ours.prompt_ids, inputs["input_ids"])
    # Rows that ended early are padded with the pad id by both (here the same id as <|im_end|>).
    assert torch.equal(ours.completion_ids, theirs[:, inputs["input_ids"].shape[1] :])
    assert ours.finish_reasons[3] == "length"  # the haiku runs past 24 tokens: the widths match too


def test_sampled_logprobs_equal_a_fresh_forward_pass(smollm2) -> None:
    model, tokenizer = smollm2
    prompts = [format_prompt(tokenizer, q) for q in SHORT_QUESTIONS[:2]]
    params = SamplingParams(temperature=0.7, max_new_tokens=16, n=2, seed=0)
    batch = HFGenerator(model, tokenizer).generate_batch(prompts, params)
    mask = batch.attention_mask  # [B, P + T]
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(input_ids=batch.input_ids, attention_mask=mask, position_ids=positions).logits
    start = batch.completion_start
    logp = logits[:, start - 1 : -1].float().log_softmax(dim=-1)  # [B, T, V]; temperature 1, as recorded
    expected = logp.gather(-1, batch.completion_ids.unsqueeze(-1)).squeeze(-1) * batch.completion_mask
    assert batch.completion_mask.sum() > 8  # something was sampled
    torch.testing.assert_close(batch.logprobs, expected, atol=1e-4, rtol=0)


def test_saved_folder_loads_back_as_the_same_model(smollm2, tmp_path: Path) -> None:
    model, tokenizer = smollm2
    save_policy(model, tokenizer, tmp_path / "smollm2")
    assert sorted(p.name for p in (tmp_path / "smollm2").glob("*.safetensors")) == ["model.safetensors"]
    loaded, loaded_tokenizer = load_policy(tmp_path / "smollm2")
    assert loaded_tokenizer.chat_template == tokenizer.chat_template
    assert loaded.generation_config.eos_token_id == 2
    ids = torch.tensor([tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}])["input_ids"]])
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=ids).logits, model(input_ids=ids).logits, atol=0, rtol=0)
