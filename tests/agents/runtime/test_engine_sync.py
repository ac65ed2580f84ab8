"""Weight sync and the off-policy correction in the RL loop, with a stand-in engine that holds its own copy of
the weights (what a vLLM engine does), so they are tested where vLLM is not installed."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any

import gymnasium
import pytest
import torch
from reward_wrappers import DigitReward

import reasongym
from reasongym.agents.runtime.engine import EngineSync
from reasongym.generation import HFGenerator
from reasongym.generation.base import GenerationBatch, SamplingParams
from reasongym.policy.lora import merge

ENV = "reasongym/Arithmetic-v0"


def _env() -> gymnasium.Env:
    return DigitReward(reasongym.make(ENV))


class CopyEngine:
    """An engine with its own copy of the weights (like `VLLMGenerator`): it samples with our sampler on a deep
    copy of the policy, receives weights by name through ``load_weights`` (every name must exist), and may
    report its log-probs shifted by ``shift`` (a sampler whose probabilities are not the trainer's)."""

    takes_token_ids = True

    def __init__(self, model: torch.nn.Module, tokenizer: Any, shift: float = 0.0) -> None:
        self.copy = copy.deepcopy(model)
        self.inner = HFGenerator(self.copy, tokenizer)
        self.shift = shift
        self.pushes = 0

    def load_weights(self, weights: Any) -> None:
        params = dict(self.copy.named_parameters())
        with torch.no_grad():
            for name, tensor in weights:
                params[name].copy_(tensor)  # a KeyError here: a name the engine's model does not have
        self.pushes += 1

    def generate(self, prompts: Any, params: SamplingParams) -> Any:
        return self.generate_batch(prompts, params).completions(params.n)

    def generate_batch(self, prompts: Any, params: SamplingParams) -> GenerationBatch:
        batch = self.inner.generate_batch(prompts, params)
        shifted = (batch.logprobs + self.shift) * batch.completion_mask  # [B, T]
        return GenerationBatch(**{**batch.__dict__, "logprobs": shifted})


_LORA = {"kl": "off", "lora": {"rank": 2, "alpha": 4.0}, "lr": 5e-2, "seed": 1}


def _grpo(small_configs: Any, **fields: Any) -> dict[str, Any]:
    return small_configs("grpo", kl="off", **fields)


def test_an_engine_synced_after_every_step_trains_exactly_like_our_sampler(
    tiny, small_configs, train
) -> None:
    # mu=2: two optimizer steps per batch. The engine is built from the starting weights (in sync); before the
    # second rollout it must get the weights of step 1's two updates, else its samples are stale.
    configs = _grpo(small_configs, seed=3)
    ours, tokenizer = tiny()
    theirs = copy.deepcopy(ours)
    engine = CopyEngine(theirs, tokenizer)
    start = [p.detach().clone() for p in ours.parameters()]
    train("grpo", configs, ours, tokenizer, _env())
    result = train("grpo", configs, theirs, tokenizer, _env(), generator=engine)
    # Twice: at the start (an engine passed in may hold other weights) and before step 2.
    assert engine.pushes == 2
    assert any(
        not torch.equal(a, b) for a, b in zip(start, ours.parameters(), strict=True)
    )  # the steps moved the weights
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0, msg=name)
    for row in result.history:  # the trainer rescored the samples: they are its own, so no mismatch
        assert row["sampler/kl_k3"] < 1e-9 and row["sampler/masked_frac"] == 0.0
        assert row["sampler/ratio_min"] == pytest.approx(1.0, abs=1e-4)


def test_without_the_push_the_engine_samples_stale_weights(tiny, small_configs, train, monkeypatch) -> None:
    configs = _grpo(small_configs, seed=3)
    ours, tokenizer = tiny()
    theirs = copy.deepcopy(ours)
    train("grpo", configs, ours, tokenizer, _env())
    monkeypatch.setattr(EngineSync, "ready", lambda self: 0.0)  # never push
    train("grpo", configs, theirs, tokenizer, _env(), generator=CopyEngine(theirs, tokenizer))
    differ = [
        not torch.allclose(a, b, atol=1e-5)
        for a, b in zip(ours.parameters(), theirs.parameters(), strict=True)
    ]
    assert any(differ)  # step 2 sampled with the starting weights: another batch, another update


def test_the_correction_weighs_by_the_sampler_trainer_ratio(tiny, small_configs, train) -> None:
    # The engine reports every log-prob 0.3 too high: log rho = -0.3 per token, rho = exp(-0.3).
    model, tokenizer = tiny()
    engine = CopyEngine(model, tokenizer, shift=0.3)
    rho = math.exp(-0.3)
    mode = {"importance_sampling": {"mode": "token_truncate", "clip_max": 3.0}}
    result = train("grpo", _grpo(small_configs, max_steps=1, **mode), model, tokenizer, ENV, generator=engine)
    row = result.history[0]
    assert row["sampler/logp_diff_mean"] == pytest.approx(0.3, abs=1e-5)
    assert row["sampler/kl_k3"] == pytest.approx(rho - 1 + 0.3, abs=1e-5)  # rho - 1 - log rho
    assert row["sampler/weight_mean"] == pytest.approx(rho, abs=1e-5)
    assert row["sampler/ratio_max"] == pytest.approx(rho, abs=1e-5)
    assert row["train/ratio_max"] == pytest.approx(1.0, abs=1e-4)  # the PPO ratio is the trainer's own
    masked = {"importance_sampling": {"mode": "token_mask", "clip_max": 3.0, "clip_min": 0.8}}
    model, tokenizer = tiny()
    row = train(
        "grpo",
        _grpo(small_configs, max_steps=1, **masked),
        model,
        tokenizer,
        ENV,
        generator=CopyEngine(model, tokenizer, shift=0.3),
    ).history[0]
    assert row["sampler/masked_frac"] == 1.0 and row["sampler/weight_mean"] == 0.0  # rho 0.74 < 0.8: all out


def test_lora_pushes_the_merged_weights_under_plain_names(tiny, small_configs, train) -> None:
    # The push before step 2 must hold the model after step 1 with its adapters merged in: a 1-step run of
    # the same settings ends exactly there.
    configs = small_configs("grpo", **_LORA)
    one_step, tokenizer = tiny()
    two_steps = copy.deepcopy(one_step)
    engine = CopyEngine(two_steps, tokenizer)  # built on the plain model: its names have no peft parts
    train(
        "grpo",
        {**configs, "run": small_configs("grpo", **{**_LORA, "max_steps": 1})["run"]},
        one_step,
        tokenizer,
        _env(),
    )
    expected = merge(one_step)
    train("grpo", configs, two_steps, tokenizer, _env(), generator=engine)
    assert engine.pushes == 2  # at the start, and before step 2
    moved = max(
        float((a - b).abs().max()) for a, b in zip(expected.parameters(), tiny()[0].parameters(), strict=True)
    )
    assert moved > 1e-3  # step 1 moved the merged weights far more than the tolerance below
    for (name, held), want in zip(engine.copy.named_parameters(), expected.parameters(), strict=True):
        # Equal up to float rounding: merging and unmerging the adapters round the weights each time.
        torch.testing.assert_close(held, want, atol=1e-5, rtol=0, msg=name)


def test_the_run_folder_records_the_engine(tmp_path: Any, tiny, small_configs, train) -> None:
    model, tokenizer = tiny()
    train("grpo", _grpo(small_configs, max_steps=1), model, tokenizer, ENV, run_dir=tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["engine"] == "hf"
    history = train("grpo", _grpo(small_configs, max_steps=1), model, tokenizer, ENV).history
    assert not any(key.startswith("sampler/") for key in history[0])  # our sampler: nothing to correct


class RawEngine(CopyEngine):
    """Reports raw (temperature 1) log-probs whatever it is asked: vLLM's default ``raw_logprobs`` mode."""

    def generate_batch(self, prompts: Any, params: SamplingParams) -> GenerationBatch:
        return super().generate_batch(prompts, dataclasses.replace(params, tempered_logprobs=False))


def _correction_row(tiny, small_configs, train, engine_class: type, tempered: bool) -> dict[str, float]:
    """Step 1's metrics of GRPO at T = 0.7 sampled by ``engine_class`` (the loss tempered or not)."""
    model, tokenizer = tiny()
    configs = _grpo(small_configs, max_steps=1, temperature=0.7, tempered_logprobs=tempered)
    return train("grpo", configs, model, tokenizer, ENV, generator=engine_class(model, tokenizer)).history[0]


def test_at_temperature_07_the_correction_compares_like_with_like(tiny, small_configs, train) -> None:
    # An engine in processed (tempered) mode, as the trainer builds vLLM's: its log-probs are the tempered
    # loss's, so the importance weights are 1 and nothing is truncated.
    row = _correction_row(tiny, small_configs, train, CopyEngine, tempered=True)
    assert row["sampler/logp_diff_max"] < 1e-4
    assert row["sampler/weight_mean"] == pytest.approx(1.0, abs=1e-4)
    # The control: raw log-probs against the tempered loss would read as an off-policy sampler.
    mismatched = _correction_row(tiny, small_configs, train, RawEngine, tempered=True)
    assert mismatched["sampler/logp_diff_mean"] > 100 * max(row["sampler/logp_diff_mean"], 1e-6)
    assert mismatched["sampler/logp_diff_max"] > 0.05
    # The untempered option keeps today's pairing: raw engine, raw loss.
    untempered = _correction_row(tiny, small_configs, train, RawEngine, tempered=False)
    assert untempered["sampler/logp_diff_max"] < 1e-4
