"""Advantages: one reward per sequence in, one advantage per sequence out.

GRPO (Shao et al., 2024, DeepSeekMath, arXiv:2402.03300, Sec. 4.1.2) scores each of a prompt's ``G``
samples by its reward minus the group's mean, divided by the group's standard deviation. Dr. GRPO
(Liu et al., 2025, arXiv:2503.20783, Sec. 3.1) shows the division by the group std up-weights easy and
hard prompts (groups with nearly equal rewards) and drops it; Mistral's Magistral and TRL's
``scale_rewards="batch"`` divide by the batch std instead. RLOO (Ahmadian et al., 2024,
arXiv:2402.14740) takes as each sample's baseline the mean of the OTHER G - 1 rewards of its group.
REINFORCE++ (Hu et al., 2025, arXiv:2501.03262) normalises across the whole batch instead of the group
(its "global advantage normalisation"); REINFORCE++-baseline first subtracts the group mean, then
normalises across the batch. Each choice is a named function in the open registry
`reasongym.agents.registries.ADVANTAGE_ESTIMATORS` (a user's joins it with ``register_advantage_estimator``);
``group_advantages`` picks one by name. Standard deviations are the unbiased (Bessel-corrected) ones, as
in TRL's ``nanstd`` and verl's ``torch.std``.

The batch-level choices (``batch_std``, ``reinforce_plus_plus``, ``reinforce_plus_plus_baseline``) need
every rank's rewards: the trainers gather them before calling ``group_advantages``. The KL penalty of
REINFORCE++ and RLOO belongs in the reward (``kl="k1_reward"``), summed over the sequence: one advantage
per sequence, where REINFORCE++'s paper gives each token the KL of the tokens after it (Eq. 8).

Shapes use the legend of `reasongym.agents.common`: B sequences in group layout (a prompt's G samples
adjacent), N = B // G prompts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeVar

import torch
from torch import Tensor

from reasongym.agents.choices import check_choice
from reasongym.agents.registries import ADVANTAGE_ESTIMATORS
from reasongym.errors import ConfigError

STD_EPS = 1e-4
"""Added to a standard deviation before dividing by it (TRL's value), so a zero-variance group gives 0."""


def _centered(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """Rewards minus the mean of their group's graded rows, 0 on rows left out: [N, G]."""
    grouped, kept = rewards.view(-1, group_size), valid.view(-1, group_size).to(rewards.dtype)  # [N, G] each
    mean = (grouped * kept).sum(dim=1, keepdim=True) / kept.sum(dim=1, keepdim=True).clamp(min=1)  # [N, 1]
    return (grouped - mean) * kept  # [N, G]


def _unbiased_std(centered: Tensor, kept: Tensor) -> Tensor:
    """Bessel-corrected std of the kept entries along the last dim (0 with fewer than two): [..., 1]."""
    count = kept.sum(dim=-1, keepdim=True)  # [..., 1]
    variance = (centered**2).sum(dim=-1, keepdim=True) / (count - 1).clamp(min=1)  # [..., 1]
    return torch.where(count > 1, variance.sqrt(), torch.zeros_like(variance))  # [..., 1]


def normalize_by_group_std(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """``(r - mean_group) / (std_group + eps)``: GRPO's outcome advantage (DeepSeekMath Sec. 4.1.2)."""
    centered = _centered(rewards, group_size, valid)  # [N, G]
    std = _unbiased_std(centered, valid.view(-1, group_size).to(rewards.dtype))  # [N, 1]
    return (centered / (std + STD_EPS)).reshape(-1)  # [B]


def normalize_by_batch_std(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """``(r - mean_group) / (std_batch + eps)``: one scale for every group (TRL ``scale_rewards="batch"``)."""
    kept = valid.to(rewards.dtype)  # [B]
    mean = (rewards * kept).sum() / kept.sum().clamp(min=1)  # []
    std = _unbiased_std((rewards - mean) * kept, kept).squeeze(-1)  # []
    return (_centered(rewards, group_size, valid) / (std + STD_EPS)).reshape(-1)  # [B]


def no_normalization(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """``r - mean_group``: Dr. GRPO's unbiased advantage (no std scaling)."""
    return _centered(rewards, group_size, valid).reshape(-1)  # [B]


def leave_one_out(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """``r_i - mean_{j != i} r_j``: RLOO, each sample's baseline the other graded samples of its group.

    The leave-one-out estimator of Kool et al. (2019) as RLOO (Ahmadian et al., 2024) uses it.

    With every row graded it equals ``G / (G - 1) * (r_i - mean_group)``: Dr. GRPO's advantage scaled up,
    unbiased because a sample's baseline never contains its own reward. A sample without another graded
    sample in its group has no baseline: advantage 0.
    """
    grouped, kept = rewards.view(-1, group_size), valid.view(-1, group_size).to(rewards.dtype)  # [N, G] each
    count = kept.sum(dim=1, keepdim=True)  # [N, 1]
    others = ((grouped * kept).sum(dim=1, keepdim=True) - grouped * kept) / (count - kept).clamp(
        min=1
    )  # [N, G]
    has_others = (count - kept) > 0  # [N, G]
    return ((grouped - others) * kept * has_others).reshape(-1)  # [B]


def _whiten(values: Tensor, valid: Tensor) -> Tensor:
    """``(x - mean_batch) / (std_batch + eps)`` over the graded rows of the batch, 0 elsewhere: [B]."""
    kept = valid.to(values.dtype)  # [B]
    mean = (values * kept).sum() / kept.sum().clamp(min=1)  # []
    centered = (values - mean) * kept  # [B]
    return centered / (_unbiased_std(centered, kept).squeeze(-1) + STD_EPS)  # [B]


def reinforce_plus_plus(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """``(r - mean_batch) / std_batch``: REINFORCE++'s global normalisation, no per-prompt baseline (Eq. 10).

    The batch mean is the only baseline, so a group whose rewards are all equal still gets a non-zero
    advantage (all right: positive where the batch is mostly wrong).
    """
    return _whiten(rewards, valid)  # [B]


def reinforce_plus_plus_baseline(rewards: Tensor, group_size: int, valid: Tensor) -> Tensor:
    """REINFORCE++ w/ baseline (Hu et al., 2025): subtract the group mean, then whiten across the batch.

    Unlike ``batch_std`` (which divides by the std of the RAW rewards), the scale is the std of the
    group-centred rewards; their batch mean is 0 with equal groups, subtracted anyway as in verl and OpenRLHF.
    """
    return _whiten(_centered(rewards, group_size, valid).reshape(-1), valid)  # [B]


T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: str, field: str) -> T:
    """``registry[name]``, or a ConfigError naming ``field``, the valid names and the nearest one (`check_choice`)."""
    check_choice(name, field, registry)
    return registry[name]


def group_advantages(
    rewards: Tensor, group_size: int, normalization: str = "group_std", *, valid: Tensor | None = None
) -> Tensor:
    """Advantages of B sequences in group layout, normalised by the named choice.

    A group whose rewards are all equal gets advantage 0 under every choice with a per-prompt baseline
    (all but ``reinforce_plus_plus``). Rows that are not ``valid`` (ungradable: the verifier could not
    decide, or ran out of time) have no reward: they are left out of every mean and standard deviation and
    get advantage 0, rather than counting as a reward of 0.

    Args:
        rewards: [B] float rewards, a prompt's ``group_size`` samples adjacent.
        group_size: G, samples per prompt; must divide B.
        normalization: A name in `reasongym.agents.registries.ADVANTAGE_ESTIMATORS`.
        valid: [B] bool, the rows whose reward counts; None: every row.

    Returns:
        [B] float32 advantages.

    Raises:
        ConfigError: Unknown ``normalization``, or ``group_size`` that does not divide B.
    """
    normalize = ADVANTAGE_ESTIMATORS[normalization]
    if group_size < 1 or rewards.ndim != 1 or rewards.numel() % group_size:
        raise ConfigError(
            f"group_size={group_size} is not allowed for rewards of shape {tuple(rewards.shape)}; "
            "expected a 1-d tensor whose length is a multiple of group_size"
        )
    if rewards.numel() == 0:  # no groups (a process whose share of the batch is empty)
        return rewards.float()
    valid = torch.ones_like(rewards, dtype=torch.bool) if valid is None else valid.bool()  # [B]
    return normalize(rewards.float(), group_size, valid)


def zero_variance_groups(
    rewards: Tensor, group_size: int, tolerance: float = 1e-6, *, valid: Tensor | None = None
) -> Tensor:
    """Which groups' rewards all lie within ``tolerance`` of each other (they carry no gradient).

    The test is ``max - min <= tolerance`` rather than ``std == 0``, so continuous rewards whose
    values differ only by rounding count as equal (the failure of OpenRLHF#1270). Only ``valid`` rows
    count: a group with fewer than two of them carries no gradient either.

    Args:
        rewards: [B] float rewards in group layout.
        group_size: G.
        tolerance: Largest spread still counted as zero variance.
        valid: [B] bool, the rows whose reward counts (graded ones); None: every row.

    Returns:
        [N] bool, True where the group's rewards are all equal.
    """
    grouped = rewards.float().view(-1, group_size)  # [N, G]
    kept = torch.ones_like(grouped, dtype=torch.bool) if valid is None else valid.bool().view(-1, group_size)
    highest = grouped.masked_fill(~kept, -math.inf).max(dim=1).values  # [N]
    lowest = grouped.masked_fill(~kept, math.inf).min(dim=1).values  # [N]
    return (kept.sum(dim=1) < 2) | (highest - lowest <= tolerance)  # [N]
