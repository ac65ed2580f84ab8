"""Multi-turn episodes on the real SmolLM2 (BPE tokenizer) are exact: a later turn continues from the token ids
sampled and observed so far, the observation is tokenized once and masked out of the loss, and the ids
trained on are the ids sampled, with the sampler's log-probs equal to a fresh forward pass over them.

Skips when the GGUF file is absent (fixture ``smollm2``).
"""

from __future__ import annotations

import gymnasium
import torch

import reasongym
from reasongym.agents.common import token_logprobs
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.rollouts.batch import collect_rollouts

OBSERVATION = "ing"
"""Letters with no space before them. Greedy, SmolLM2 starts its answers to Arithmetic level-1 problems 0 and 1
with "1. " and "1. Add"; cut off there, the text "1. ing" and "1. Adding" tokenizes into other ids."""


class ObserveOnce(gymnasium.Wrapper):
    """The first step answers with `OBSERVATION` and goes on; the second is graded by the env."""

    def reset(self, **kwargs: object) -> tuple:
        self.turn = 0
        return self.env.reset(**kwargs)

    def step(self, action: str) -> tuple:
        self.turn += 1
        if self.turn == 1:
            return OBSERVATION, 0.0, False, False, {}
        return self.env.step(action)


def test_a_later_turn_continues_from_the_sampled_and_observed_ids(smollm2) -> None:
    model, tokenizer = smollm2
    generator = HFGenerator(model, tokenizer)
    sample, contexts = generator.generate_batch, []

    def recording(prompts: list, params: SamplingParams) -> object:
        contexts.append(list(prompts))
        return sample(prompts, params)

    generator.generate_batch = recording
    env = ObserveOnce(reasongym.make("reasongym/Arithmetic-v0"))
    params = SamplingParams(temperature=0.0, max_new_tokens=3, n=2)
    batch = collect_rollouts(env, generator, tokenizer, [0, 1], params=params, difficulty=1)
    assert batch.turns.tolist() == [2, 2, 2, 2] and len(contexts) == 2
    observed = tokenizer(OBSERVATION, add_special_tokens=False)["input_ids"]
    for row, context in enumerate(contexts[1]):  # turn 2 got ids: prompt, turn 1, the observation once
        assert isinstance(context, list) and context[-len(observed) :] == observed
        trained = batch.input_ids[row][batch.attention_mask[row].bool()].tolist()
        assert trained[: len(context)] == context
    # Decoding those contexts and tokenizing them again (what turn 2 used to be sampled from) changes them.
    retokenized = [
        tokenizer(tokenizer.decode(c, skip_special_tokens=False), add_special_tokens=False)["input_ids"]
        for c in contexts[1]
    ]
    assert all(again != ids for again, ids in zip(retokenized, contexts[1], strict=True))
    start = batch.completion_start
    real = batch.attention_mask[:, start:].sum(dim=1)  # [B] model and observation tokens
    assert (real - batch.completion_mask.sum(dim=1)).tolist() == [len(observed)] * 4  # masked out of the loss
    with torch.no_grad():
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, start)
    torch.testing.assert_close(batch.old_logp, logp * batch.completion_mask, atol=1e-4, rtol=0)
