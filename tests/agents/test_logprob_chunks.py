"""`token_logprobs` with the LM head run in chunks equals the model's own full logits: values, entropies and
gradients, on the tiny model and on the real one; entropies carry no gradient."""

from __future__ import annotations

import copy

import pytest
import torch

from reasongym.agents import common
from reasongym.agents.common import token_logprobs


def _both_ways(
    monkeypatch: pytest.MonkeyPatch,
    model: torch.nn.Module,
    ids: torch.Tensor,
    mask: torch.Tensor,
    starts: list,
) -> list[tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]]:
    """``(logp, entropy, gradients of the log-probs' sum)`` chunked (7 tokens a chunk) and from the full
    logits. The entropy is a metric: it carries no gradient (its backward over the vocabulary would be waste)."""
    results = []
    for chunked in (True, False):
        monkeypatch.setattr(common, "LOGIT_CHUNK_TOKENS", 7)
        monkeypatch.setattr(
            common, "CHUNKED_HEAD_MODEL_TYPES", frozenset({"llama"}) if chunked else frozenset()
        )
        model.zero_grad()
        logp, entropy = token_logprobs(model, ids, mask, starts, with_entropy=True, temperature=0.7)
        assert logp.requires_grad and not entropy.requires_grad
        logp.sum().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results.append((logp.detach(), entropy.detach(), grads))
    return results


def _check(results: list, atol: float) -> None:
    (logp, entropy, grads), (full_logp, full_entropy, full_grads) = results
    torch.testing.assert_close(logp, full_logp, rtol=1e-5, atol=atol)  # float32 GEMMs of other shapes
    torch.testing.assert_close(entropy, full_entropy, rtol=1e-5, atol=atol)
    assert len(grads) == len(full_grads) > 0
    for grad, full in zip(grads, full_grads, strict=True):  # float32 noise, amplified near-certain tokens
        assert float((grad - full).norm()) <= 1e-3 * float(full.norm()) + atol  # a bug is O(1)


@pytest.mark.parametrize("head", ["trained", "frozen"])
def test_chunked_head_equals_full_logits_on_the_tiny_model(
    monkeypatch: pytest.MonkeyPatch, tiny, head: str
) -> None:
    torch.manual_seed(0)
    model, _ = tiny()
    model.lm_head.weight.requires_grad_(head == "trained")  # frozen: LoRA's case, the gradient in closed form
    ids = torch.randint(4, 60, (3, 11))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0  # a left-padded row
    mask[2, -3:] = 0  # a right-padded completion
    _check(_both_ways(monkeypatch, model.train(), ids, mask, [4, 3, 5]), atol=1e-5)


@pytest.mark.parametrize("head", ["trained", "frozen"])
def test_chunked_head_equals_full_logits_on_the_real_model(
    monkeypatch: pytest.MonkeyPatch, smollm2: tuple[object, object], head: str
) -> None:
    base, tokenizer = smollm2
    model = copy.deepcopy(base).train()  # gradients go into a copy: the fixture's model is shared
    model.get_output_embeddings().weight.requires_grad_(head == "trained")  # tied: the embeddings too
    texts = ["<|im_start|>user\n2+3?<|im_end|>\n<|im_start|>assistant\nIt is 5.", "Hello there, friend"]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    _check(_both_ways(monkeypatch, model, batch["input_ids"], batch["attention_mask"], [6, 6]), atol=1e-5)
