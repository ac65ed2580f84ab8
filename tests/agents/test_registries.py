"""Issue 52, item 5: the policy losses, advantage estimators and divergences are open registries. A user's
choice is one decorated function; the configs' name checks and the trainers take it like a built-in one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from reasongym.agents import register_advantage_estimator, register_policy_loss
from reasongym.agents.algorithm_configs import DAPOConfig, DistillConfig, GRPOConfig
from reasongym.agents.algorithms import preset_configs
from reasongym.agents.grpo import train_grpo
from reasongym.agents.policy_losses import Surrogate
from reasongym.agents.registries import ADVANTAGE_ESTIMATORS, POLICY_LOSSES, Registry
from reasongym.errors import ConfigError

CALLS: list[tuple[int, ...]] = []


def clipped_reinforce(logp, old_logp, adv, mask, cfg):  # noqa: ANN001, ANN201 - a user's loss, as the README's
    """REINFORCE on each token, its importance weight capped at ``1 + clip_eps`` and detached."""
    CALLS.append(tuple(logp.shape))
    ratio = torch.exp(logp - old_logp)  # [B, T]
    weight = ratio.clamp(max=1 + cfg.clip_eps).detach()  # [B, T]
    never = torch.zeros_like(ratio, dtype=torch.bool)  # [B, T]
    return Surrogate(-weight * adv * logp, ratio, never, ratio > 1 + cfg.clip_eps)


def sign_of_reward(rewards: torch.Tensor, group_size: int, valid: torch.Tensor) -> torch.Tensor:
    """+1 for a reward above 0, -1 otherwise, on graded rows."""
    return torch.where(rewards > 0, 1.0, -1.0) * valid  # [B]


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    """The user's loss and estimator, registered as a user would, for the test alone."""
    register_policy_loss("test_clipped_reinforce")(clipped_reinforce)
    register_advantage_estimator("test_sign")(sign_of_reward)
    yield
    POLICY_LOSSES.unregister("test_clipped_reinforce")
    ADVANTAGE_ESTIMATORS.unregister("test_sign")


def test_a_users_loss_and_estimator_train_like_the_built_in_ones(tiny) -> None:
    fields = {"num_prompts": 2, "group_size": 2, "max_new_tokens": 8, "eval_every": 0, "progress_bar": False}
    configs = preset_configs(
        "tiny",
        "grpo",
        max_steps=1,
        policy_loss="test_clipped_reinforce",
        advantage_normalization="test_sign",
        **fields,
    )
    model, tokenizer = tiny()
    before = [p.detach().clone() for p in model.parameters()]
    result = train_grpo(
        configs["grpo"],
        model,
        tokenizer,
        "reasongym/Arithmetic-v0",
        run=configs["run"],
        rollout=configs["rollout"],
    )
    assert CALLS and CALLS[-1][0] == 4  # the update called the user's loss on the batch's 4 rows
    assert result.history[0]["train/advantage_mean"] == -1.0  # every reward 0: the estimator's -1
    assert any(not torch.equal(p, q) for p, q in zip(before, model.parameters(), strict=True))


def test_the_name_lists_are_the_registries() -> None:
    assert "test_clipped_reinforce" in POLICY_LOSSES and "test_sign" in ADVANTAGE_ESTIMATORS
    assert GRPOConfig(policy_loss="test_clipped_reinforce").policy_loss == "test_clipped_reinforce"
    assert DAPOConfig(advantage_normalization="test_sign").advantage_normalization == "test_sign"
    with pytest.raises(
        ConfigError,
        match=r"policy_loss='test_clipped' is not allowed; valid names: \[.*'test_clipped_reinforce'.*\]; did you mean 'test_clipped_reinforce'\?",
    ):
        GRPOConfig(policy_loss="test_clipped")
    with pytest.raises(
        ConfigError,
        match=r"^divergence='kl' is not allowed; valid names: \['forward_kl', 'jsd', 'reverse_kl', 'sampled_reverse_kl'\]",
    ):
        DistillConfig(divergence="kl")


def test_a_name_is_registered_once() -> None:
    registry = Registry("policy_loss", {"ppo_clip": "reasongym.agents.policy_losses:ppo_clip"}, {})
    with pytest.raises(
        ConfigError, match=r"^policy_loss='ppo_clip' is registered already; choose another name$"
    ):
        registry.register("ppo_clip")(clipped_reinforce)
    with pytest.raises(ConfigError, match=r"^policy_loss name must be a non-empty string, got ''$"):
        registry.register("")
    registry.register("mine", batch_level=True)(clipped_reinforce)
    assert list(registry) == ["ppo_clip", "mine"] and registry["mine"] is clipped_reinforce
    assert registry.has("mine", "batch_level") and not registry.has("ppo_clip", "batch_level")
    registry.unregister("mine")
    assert list(registry) == ["ppo_clip"]
    with pytest.raises(ConfigError, match=r"^policy_loss='ppo_clip' was not registered with register\(\)"):
        registry.unregister("ppo_clip")
