"""Boundaries, defaults and messages of the advantages, GRPO and DAPO helpers, on hand-computed values.

Each test pins a value a surviving mutant changed (benchmarks/mutation.py): an inclusive bound, a
default argument, a degenerate group size, a field name in a message.
"""

from __future__ import annotations

import math
import re

import pytest
import torch

from reasongym.agents.advantages import group_advantages, zero_variance_groups
from reasongym.agents.dapo import (
    DAPOConfig,
    dapo_loss,
    dynamic_sampling_filter,
    overlong_buffer_tokens,
    overlong_penalty,
)
from reasongym.agents.grpo import GRPOConfig, grpo_loss, kl_reward_penalty
from reasongym.errors import ConfigError

# Two samples per group, rewards 1 and 0: mean 0.5, centred +-0.5, unbiased std sqrt(0.5).
PAIR = 0.5 / (math.sqrt(0.5) + 1e-4)  # 0.70700681...


@pytest.mark.parametrize(
    ("rewards", "group_size", "expected"),
    [
        ([1.0, 0.0], 1, [0.0, 0.0]),  # a group of one has no spread: advantage 0, not nan
        ([1.0, 0.0], 2, [PAIR, -PAIR]),  # the smallest group that is divided by its std
        ([1.0, 0.0, 0.0, 1.0], 2, [PAIR, -PAIR, -PAIR, PAIR]),
    ],
)
def test_group_std_advantages_of_small_groups(rewards: list, group_size: int, expected: list) -> None:
    advantages = group_advantages(torch.tensor(rewards), group_size, "group_std")
    assert advantages.tolist() == pytest.approx(expected, abs=1e-6)
    assert not advantages.isnan().any()


def test_the_default_normalization_is_the_group_std() -> None:
    rewards = torch.tensor([1.0, 0.0])
    assert group_advantages(rewards, 2).tolist() == pytest.approx([PAIR, -PAIR], abs=1e-6)


@pytest.mark.parametrize(
    ("rewards", "group_size", "shape"),
    [
        (torch.zeros(4), 0, "(4,)"),  # no group size at all: a message, not a ZeroDivisionError
        (torch.zeros(5), 2, "(5,)"),  # 1-d, but not a multiple of the group size
        (torch.zeros(2, 2), 2, "(2, 2)"),  # a multiple, but not 1-d
    ],
)
def test_a_group_size_that_does_not_fit_the_rewards_is_named(
    rewards: torch.Tensor, group_size: int, shape: str
) -> None:
    message = (
        f"group_size={group_size} is not allowed for rewards of shape {shape}; "
        "expected a 1-d tensor whose length is a multiple of group_size"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        group_advantages(rewards, group_size, "none")


def test_an_unknown_normalization_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^advantage_normalization='group' is not allowed; valid names"):
        group_advantages(torch.zeros(2), 2, "group")


@pytest.mark.parametrize(
    ("rewards", "tolerance", "expected"),
    [
        ([1.0, 1.0, 1.0, 0.0], 0.0, [True, False]),  # a spread of exactly 0 is within a tolerance of 0
        ([0.0, 0.5, 0.0, 0.75], 0.5, [True, False]),  # a spread equal to the tolerance still counts
    ],
)
def test_zero_variance_includes_a_spread_equal_to_the_tolerance(
    rewards: list, tolerance: float, expected: list
) -> None:
    assert zero_variance_groups(torch.tensor(rewards), 2, tolerance).tolist() == expected


def test_dynamic_sampling_uses_the_configured_tolerance() -> None:
    rewards = torch.tensor([1.0, 0.75, 0.0, 1.0])  # spreads 0.25 and 1.0
    correct = torch.tensor([True, False, False, True])
    cfg = DAPOConfig(zero_variance_tolerance=0.5)
    assert dynamic_sampling_filter(rewards, correct, 2, cfg).tolist() == [False, True]


def test_the_accuracy_band_is_inclusive_at_both_ends_and_per_group() -> None:
    # Rewards always vary within a group, so only the band decides; accuracies 1/4, 2/4, 3/4, 4/4.
    rewards = torch.tensor([0.0, 1.0, 0.0, 1.0] * 4)
    correct = torch.tensor([[i < k for i in range(4)] for k in (1, 2, 3, 4)]).reshape(-1)
    cfg = DAPOConfig(accuracy_band=(0.25, 0.75))
    assert dynamic_sampling_filter(rewards, correct, 4, cfg).tolist() == [True, True, True, False]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mu": 0}, "mu=0 is not allowed; expected an integer in [1, 1024]"),
        ({"max_extra_rounds": -1}, "max_extra_rounds=-1 is not allowed; expected an integer in [0, 1024]"),
        (
            {"overlong_buffer": -1},
            "overlong_buffer=-1 is not allowed; expected an integer in [0, 1048576] or None",
        ),
        (
            {"eps_high": 0.0},
            "eps_high=0.0 is not allowed; expected a float in (0, 1e+06]",
        ),
        (
            {"eps_low": 0.0},
            "eps_low=0.0 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"eps_low": 1.0},
            "eps_low=1.0 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"eps_low": 1.5},
            "eps_low=1.5 is not allowed; expected a float in (0, 1)",
        ),
        (
            {"overlong_penalty": -0.5},
            "overlong_penalty=-0.5 is not allowed; expected a float in [0, 1e+06] (the penalty at max_new_tokens; 0: off)",
        ),
        (
            {"accuracy_band": (0.5, 1.5)},
            "accuracy_band=(0.5, 1.5) is not allowed; expected (lo, hi) with 0 <= lo <= hi <= 1",
        ),
    ],
)
def test_dapo_config_refuses_out_of_range_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        DAPOConfig(**overrides)


@pytest.mark.parametrize(
    "overrides",
    [
        {"mu": 1, "max_extra_rounds": 0, "overlong_buffer": 0},
        {"overlong_penalty": 0.0, "zero_variance_tolerance": 0.0},
        {"overlong_penalty": 0.5},
        {"accuracy_band": (0.0, 1.0)},
        {"accuracy_band": (0.5, 0.5)},
    ],
)
def test_dapo_config_accepts_the_ends_of_its_ranges(overrides: dict) -> None:
    cfg = DAPOConfig(**overrides)
    assert {name: getattr(cfg, name) for name in overrides} == overrides


def test_the_default_overlong_buffer_is_capped_at_4096_tokens() -> None:
    assert overlong_buffer_tokens(DAPOConfig(), 40960) == 4096  # a fifth would be 8192


def test_overlong_penalty_stops_at_its_full_value_past_the_limit() -> None:
    cfg = DAPOConfig(overlong_buffer=4, overlong_penalty=1.0)
    assert overlong_penalty(torch.tensor([12, 20]), cfg, 10).tolist() == [-1.0, -1.0]


def test_a_zero_overlong_penalty_keeps_the_device_and_float32() -> None:
    lengths = torch.empty(3, dtype=torch.long, device="meta")
    assert overlong_penalty(lengths, DAPOConfig(overlong_buffer=0), 10).device.type == "meta"
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:  # the same dtype as the non-zero branch, whatever the default
        assert overlong_penalty(torch.tensor([3]), DAPOConfig(overlong_buffer=0), 10).dtype == torch.float32
    finally:
        torch.set_default_dtype(previous)


def test_dapo_loss_refuses_a_reference_and_reports_its_loss() -> None:
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.ones(1, 2)
    message = "dapo_loss got ref_logp; DAPO has no KL term (paper Sec. 2.3), pass None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        dapo_loss(logp, logp, logp, adv, mask, cfg=DAPOConfig())
    loss, metrics = dapo_loss(logp, logp, None, adv, mask, cfg=DAPOConfig())
    assert loss.item() == pytest.approx(-0.5)  # ratio 1, every token -A
    assert metrics["loss/policy"] == pytest.approx(-0.5)


@pytest.mark.parametrize("loss", ["grpo", "dapo"])
def test_the_loss_keeps_the_dtype_of_the_log_probs(loss: str) -> None:
    logp = torch.zeros(1, 2, dtype=torch.bfloat16)
    adv, mask = torch.tensor([0.1]), torch.ones(1, 2)
    if loss == "grpo":
        value, _ = grpo_loss(logp, logp, None, adv, mask, cfg=GRPOConfig(kl="off"))
    else:
        value, _ = dapo_loss(logp, logp, None, adv, mask, cfg=DAPOConfig())
    assert value.dtype == torch.bfloat16


def test_k1_reward_without_a_reference_is_named() -> None:
    message = "kl='k1_reward' needs ref_logp (log-probs under the reference model); got None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        kl_reward_penalty(torch.zeros(1, 2), None, torch.ones(1, 2), GRPOConfig(kl="k1_reward"))


def test_grpo_loss_names_a_missing_or_misshapen_reference() -> None:
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.ones(1, 2)
    message = "kl='k3_loss' needs ref_logp (log-probs under the reference model); got None"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        grpo_loss(logp, logp, None, adv, mask, cfg=GRPOConfig(kl="k3_loss"))
    with pytest.raises(ConfigError, match=r"loss inputs disagree: .*'ref_logp': \(1, 3\)"):
        grpo_loss(logp, logp, torch.zeros(1, 3), adv, mask, cfg=GRPOConfig(kl="k3_loss"))


VALID = "['batch_std', 'group_std', 'none', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline', 'rloo']"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "group",
            f"advantage_normalization='group' is not allowed; valid names: {VALID}; did you mean 'group_std'?",
        ),
        (
            "std",
            f"advantage_normalization='std' is not allowed; valid names: {VALID}; did you mean 'group_std'?",
        ),
        ("zzz", f"advantage_normalization='zzz' is not allowed; valid names: {VALID}"),
    ],
)
def test_an_unknown_name_suggests_the_nearest_one_only_when_there_is_one(name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        group_advantages(torch.zeros(2), 2, name)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mu": 0}, "mu=0 is not allowed; expected an integer in [1, 1024]"),
        ({"clip_eps": 0.0}, "clip_eps=0.0 is not allowed; expected a float in (0, 1)"),
        ({"clip_eps": 1.0}, "clip_eps=1.0 is not allowed; expected a float in (0, 1)"),
        ({"kl_coef": -0.1}, "kl_coef=-0.1 is not allowed; expected a float in [0, 1e+06]"),
        ({"kl_coef": math.inf}, "kl_coef=inf is not allowed; expected a float in [0, 1e+06]"),
    ],
)
def test_grpo_config_refuses_out_of_range_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        GRPOConfig(**overrides)


def test_grpo_config_accepts_no_kl_weight() -> None:
    assert GRPOConfig(kl_coef=0.0).kl_coef == 0.0


def test_grpo_loss_without_totals_divides_by_its_own_length_limit() -> None:
    # One sequence of T = 2 with one live token: -A = -0.5 summed, over B * T = 2 under "constant".
    logp, adv, mask = torch.zeros(1, 2), torch.tensor([0.5]), torch.tensor([[1, 0]])
    loss, metrics = grpo_loss(
        logp, logp, None, adv, mask, cfg=GRPOConfig(kl="off", loss_aggregation="constant")
    )
    assert loss.item() == pytest.approx(-0.25)
    assert metrics["loss/policy"] == pytest.approx(-0.25)
    assert metrics["loss/kl"] == 0.0  # no reference, no KL
