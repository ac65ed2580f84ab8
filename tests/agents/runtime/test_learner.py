"""Issue 52, item 4: with one update per batch the update's own forward pass gives the old log-probs of a batch
another engine drew (or a sampler ahead): the step is today's scoring pass followed by the update, within float
tolerance, the off-policy correction included, with or without micro-batches."""

from __future__ import annotations

import copy
import functools
from collections import defaultdict

import pytest
import torch

from reasongym.agents.algorithm_configs import GRPOConfig, ImportanceSamplingConfig
from reasongym.agents.grpo import grpo_loss
from reasongym.agents.runtime.learner import Learner
from reasongym.agents.runtime.optimizer import build_optimizer
from reasongym.agents.runtime.update import old_logp_from_update
from reasongym.distributed import SINGLE_PROCESS
from reasongym.generation import HFGenerator, SamplingParams
from reasongym.rollouts.batch import collect_rollouts

ENV = "reasongym/Arithmetic-v0"


def _learner(model: torch.nn.Module, small_configs, micro_batch_size: int | None) -> Learner:
    configs = small_configs("grpo", lr=3e-3, micro_batch_size=micro_batch_size, gradient_checkpointing=False)
    optimizer, scheduler = build_optimizer(model, configs["run"])
    run, rollout = configs["run"], configs["rollout"]
    return Learner(model, optimizer, scheduler, run, rollout, SINGLE_PROCESS, model, None)


def _engine_batch(model: torch.nn.Module, tokenizer: object, shift: float) -> object:
    """A batch as another engine reports it: its log-probs ``shift`` above the policy's (a stale or different
    engine), varied rewards so that the loss moves the weights."""
    params = SamplingParams(n=4, max_new_tokens=10, temperature=1.0, seed=3)
    batch = collect_rollouts(ENV, HFGenerator(model, tokenizer), tokenizer, [0, 1], params=params)
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25])
    engine_logp = (batch.old_logp + shift) * batch.completion_mask  # [B, T]
    return type(batch)(**{**batch.__dict__, "rewards": rewards, "old_logp": engine_logp})


@pytest.mark.parametrize("micro_batch_size", [None, 3])
@pytest.mark.parametrize("mode", ["off", "token_truncate", "sequence_mask"])
def test_the_updates_forward_pass_gives_what_a_scoring_pass_gave(
    tiny, small_configs, micro_batch_size: int | None, mode: str
) -> None:
    model, tokenizer = tiny()
    batch = _engine_batch(model, tokenizer, shift=0.05)
    cfg = GRPOConfig(kl="off", importance_sampling=ImportanceSamplingConfig(mode=mode, clip_max=1.2))
    loss = functools.partial(grpo_loss, cfg=cfg)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5, -1.0, 1.0, -0.5, 0.5])
    results = {}
    for way in ("scoring pass", "update's pass"):
        trained = copy.deepcopy(model)
        learner = _learner(trained, small_configs, micro_batch_size)
        scored = learner.rescore(batch) if way == "scoring pass" else old_logp_from_update(batch)
        phases: defaultdict[str, float] = defaultdict(float)
        metrics = learner.update(scored, adv, loss, mu=1, phases=phases, correction=cfg.importance_sampling)
        results[way] = (trained, metrics)
    (before, first), (after, second) = results["scoring pass"], results["update's pass"]
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before.parameters(), strict=True))
    for (name, p), q in zip(before.named_parameters(), after.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)
    assert first.keys() == second.keys()
    for key in first:
        assert second[key] == pytest.approx(first[key], rel=1e-4, abs=1e-6), key
    if mode != "off":  # the engine's log-probs were 0.05 above the trainer's: the correction saw it
        assert second["sampler/logp_diff_mean"] == pytest.approx(0.05, abs=1e-4)
    assert second["train/ratio_max"] == second["train/ratio_min"] == 1.0  # old = this very forward pass


def test_several_updates_still_need_the_old_log_probs_first(tiny, small_configs) -> None:
    from reasongym.errors import ConfigError

    model, tokenizer = tiny()
    batch = old_logp_from_update(_engine_batch(model, tokenizer, shift=0.0))
    learner = _learner(model, small_configs, None)
    loss = functools.partial(grpo_loss, cfg=GRPOConfig(kl="off", mu=2))
    with pytest.raises(
        ConfigError, match=r"mu > 1 updates use it: call recompute_old_logp\(model, batch\) first"
    ):
        learner.update(batch, torch.zeros(8), loss, mu=2, phases=defaultdict(float))
