"""Shared trainer primitives: token log-probs against a naive reference, masked reductions, seeding."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from reasongym.agents.common import masked_mean, masked_sum, seed_everything, token_logprobs
from reasongym.errors import ConfigError
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model
from tests.conftest import TINY_SHAPE

# (prompt, completion) pairs of different lengths, so batches need padding on both sides.
PAIRS = [("1+1=", "2<"), ("What is 6*7?", " 42, so \\boxed{42}"), ("x", "yz")]


@pytest.fixture(scope="module")
def tokenizer():
    return make_char_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return make_tiny_model(tokenizer, **TINY_SHAPE, seed=1)


def _naive(model, tokenizer, temperature: float = 1.0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per pair, unpadded: full log_softmax over the vocabulary, then pick the completion tokens."""
    results = []
    for prompt, completion in PAIRS:
        ids = torch.tensor([tokenizer(prompt + completion)["input_ids"]])
        log_probs = (model(input_ids=ids).logits[0, :-1] / temperature).log_softmax(dim=-1)  # [L-1, V]
        start = len(prompt)
        targets = ids[0, start:]
        logp = log_probs[start - 1 :].gather(-1, targets[:, None]).squeeze(-1)
        entropy = -(log_probs.exp() * log_probs).sum(dim=-1)[start - 1 :]
        results.append((logp, entropy))
    return results


def _left_padded_prompts(tokenizer) -> tuple[torch.Tensor, torch.Tensor, int]:
    """The GenerationBatch layout: prompts left-padded to P, completions right-padded."""
    width_p = max(len(p) for p, _ in PAIRS)
    width_c = max(len(c) for _, c in PAIRS)
    ids = torch.full((len(PAIRS), width_p + width_c), tokenizer.pad_token_id)
    mask = torch.zeros_like(ids)
    for row, (prompt, completion) in enumerate(PAIRS):
        ids[row, width_p - len(prompt) : width_p + len(completion)] = torch.tensor(
            tokenizer(prompt + completion)["input_ids"]
        )
        mask[row, width_p - len(prompt) : width_p + len(completion)] = 1
    return ids, mask, width_p


def _right_padded_sequences(tokenizer) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """Prompt and completion back to back, right-padded: each row's completion starts elsewhere."""
    width = max(len(p) + len(c) for p, c in PAIRS)
    ids = torch.full((len(PAIRS), width), tokenizer.pad_token_id)
    mask = torch.zeros_like(ids)
    for row, (prompt, completion) in enumerate(PAIRS):
        ids[row, : len(prompt + completion)] = torch.tensor(tokenizer(prompt + completion)["input_ids"])
        mask[row, : len(prompt + completion)] = 1
    return ids, mask, [len(p) for p, _ in PAIRS]


def _check_against_naive(logp, entropy, reference) -> None:
    width = max(len(ref_logp) for ref_logp, _ in reference)
    assert logp.shape[1] >= width
    for row, (ref_logp, ref_entropy) in enumerate(reference):
        n = len(ref_logp)
        torch.testing.assert_close(logp[row, :n], ref_logp, atol=1e-5, rtol=1e-5)
        assert (logp[row, n:] == 0).all()  # padding columns are zero
        if entropy is not None:
            torch.testing.assert_close(entropy[row, :n], ref_entropy, atol=1e-5, rtol=1e-5)
            assert (entropy[row, n:] == 0).all()


@pytest.mark.parametrize("micro_batch_size", [None, 1, 2])
@pytest.mark.parametrize("layout", ["left_padded_prompts", "right_padded_per_row_start"])
def test_token_logprobs_match_naive_reference(model, tokenizer, layout: str, micro_batch_size) -> None:
    if layout == "left_padded_prompts":
        ids, mask, start = _left_padded_prompts(tokenizer)
    else:
        ids, mask, start = _right_padded_sequences(tokenizer)
    with torch.no_grad():
        logp, entropy = token_logprobs(
            model, ids, mask, start, micro_batch_size=micro_batch_size, with_entropy=True
        )
        reference = _naive(model, tokenizer)
    _check_against_naive(logp, entropy, reference)


def test_token_logprobs_temperature_and_no_entropy_by_default(model, tokenizer) -> None:
    ids, mask, start = _left_padded_prompts(tokenizer)
    with torch.no_grad():
        logp, entropy = token_logprobs(model, ids, mask, start, temperature=0.5)
        reference = _naive(model, tokenizer, temperature=0.5)
    assert entropy is None
    _check_against_naive(logp, None, reference)


def test_token_logprobs_carry_gradients(model, tokenizer) -> None:
    ids, mask, start = _left_padded_prompts(tokenizer)
    model.zero_grad()
    logp, _ = token_logprobs(model, ids, mask, start, micro_batch_size=2)
    logp.sum().backward()
    grad = model.lm_head.weight.grad
    assert grad is not None and grad.abs().sum() > 0
    model.zero_grad()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"completion_start": 0},
            "completion_start=0 is not allowed; expected one int or 2 ints, each in [1, 4]",
        ),
        ({"completion_start": [2, 5]}, "completion_start=[2, 5] is not allowed; expected one int or 2 ints"),
        (
            {"completion_start": [1, 2, 3]},
            "completion_start=[1, 2, 3] is not allowed; expected one int or 2 ints",
        ),
        ({"completion_start": 2, "micro_batch_size": 0}, "micro_batch_size=0 is not allowed"),
        ({"completion_start": 2, "temperature": 0.0}, "temperature=0.0 is not allowed; expected a float > 0"),
    ],
)
def test_token_logprobs_rejects_bad_arguments(model, kwargs: dict, message: str) -> None:
    ids = torch.ones((2, 4), dtype=torch.long)
    with pytest.raises(ConfigError) as info:
        token_logprobs(model, ids, torch.ones_like(ids), **kwargs)
    assert str(info.value).startswith(message)


# x = [[1, 2, 3], [4, nan, 6]] with the nan masked out everywhere below.
X = torch.tensor([[1.0, 2.0, 3.0], [4.0, float("nan"), 6.0]])
MASK = torch.tensor([[1, 1, 0], [1, 0, 1]])


@pytest.mark.parametrize(
    ("fn", "dim", "expected"),
    [
        (masked_sum, None, torch.tensor(13.0)),  # 1 + 2 + 4 + 6
        (masked_sum, 1, torch.tensor([3.0, 10.0])),
        (masked_sum, 0, torch.tensor([5.0, 2.0, 6.0])),
        (masked_mean, None, torch.tensor(13.0 / 4)),
        (masked_mean, 1, torch.tensor([1.5, 5.0])),
        (masked_mean, 0, torch.tensor([2.5, 2.0, 6.0])),
    ],
)
def test_masked_reductions(fn, dim, expected: torch.Tensor) -> None:
    torch.testing.assert_close(fn(X, MASK, dim=dim), expected)


def test_masked_mean_weights_and_empty_rows() -> None:
    x = torch.tensor([[2.0, 4.0], [1.0, 1.0]])
    weights = torch.tensor([[0.25, 0.75], [0.0, 0.0]])
    # row 0: (0.5 + 3) / 1 = 3.5; row 1 has no weight, so 0 rather than nan
    torch.testing.assert_close(masked_mean(x, weights, dim=1), torch.tensor([3.5, 0.0]))
    torch.testing.assert_close(masked_mean(x, torch.zeros(2, 2, dtype=torch.bool)), torch.tensor(0.0))


@pytest.fixture
def restore_global_rngs():
    """seed_everything changes process-wide state; put it back for the tests that follow."""
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    yield
    random.setstate(states[0])
    np.random.set_state(states[1])
    torch.set_rng_state(states[2])


def test_seed_everything_repeats_every_rng(restore_global_rngs) -> None:
    def draw() -> tuple[float, float, float]:
        return random.random(), float(np.random.rand()), float(torch.rand(()))

    seed_everything(123)
    first = draw()
    seed_everything(123)
    assert draw() == first
    seed_everything(124)
    assert draw() != first
