"""Advantages: one reward per sequence in, one advantage per sequence out.

GRPO (Shao et al., 2024, DeepSeekMath, arXiv:2402.03300, Sec. 4.1.2) scores each of a prompt's ``G``
samples by its reward minus the group's mean, divided by the group's standard deviation. Dr. GRPO
(Liu et al., 2025, arXiv:2503.20783, Sec. 3.1) shows the division by the group std up-weights easy and
hard prompts (groups with nearly equal rewards) and drops it; Mistral's Magistral and TRL's
``scale_rewards="batch"`` divide by the batch std instead. RLOO (Ahmadian et al., 2024,
arXiv:2402.14740) takes as each sample's baseline the mean of the OTHER G - 1 rewards of its group.
REINFORCE++ (Hu et al., 2025, arXiv:2501.03262) normalises across the whole batch instead of the group
(its "global advantage normalisation"); REINFORCE++-baseline first subtracts the group mean, then
normalises across the batch. Each choice is a named function in ``ADVANTAGE_NORMALIZATIONS``;
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

import difflib
from collections.abc import Callable, Mapping
from typing import TypeVar

import torch
from torch import Tensor

from reasongym.errors import ConfigError

STD_EPS = 1e-4
"""Added to a standard deviation before dividing by it (TRL's value), so a zero-variance group gives 0."""


def _centered(rewards: Tensor, group_size: int) -> Tensor:
    """Rewards minus their group's mean: [N, G]."""
    grouped = rewards.view(-1, group_size)  # [N, G]
    return grouped - grouped.mean(dim=1, keepdim=True)  # [N, G]


def normalize_by_group_std(rewards: Tensor, group_size: int) -> Tensor:
    """``(r - mean_group) / (std_group + eps)``: GRPO's outcome advantage (DeepSeekMath Sec. 4.1.2)."""
    grouped = rewards.view(-1, group_size)  # [N, G]
    std = grouped.std(dim=1, keepdim=True) if group_size > 1 else torch.zeros_like(grouped)
    return (_centered(rewards, group_size) / (std + STD_EPS)).reshape(-1)  # [B]


def normalize_by_batch_std(rewards: Tensor, group_size: int) -> Tensor:
    """``(r - mean_group) / (std_batch + eps)``: one scale for every group (TRL ``scale_rewards="batch"``)."""
    std = rewards.std() if rewards.numel() > 1 else rewards.new_zeros(())  # []
    return (_centered(rewards, group_size) / (std + STD_EPS)).reshape(-1)  # [B]


def no_normalization(rewards: Tensor, group_size: int) -> Tensor:
    """``r - mean_group``: Dr. GRPO's unbiased advantage (no std scaling)."""
    return _centered(rewards, group_size).reshape(-1)  # [B]


def leave_one_out(rewards: Tensor, group_size: int) -> Tensor:
    """``r_i - mean_{j != i} r_j``: RLOO, each sample's baseline the other samples of its group.

    The leave-one-out estimator of Kool et al. (2019) as RLOO (Ahmadian et al., 2024) uses it.

    It equals ``G / (G - 1) * (r_i - mean_group)``: Dr. GRPO's advantage scaled up, unbiased because a
    sample's baseline never contains its own reward. A group of one has no other sample: advantage 0.
    """
    grouped = rewards.view(-1, group_size)  # [N, G]
    if group_size < 2:
        return torch.zeros_like(rewards)  # [B]
    others = (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)  # [N, G]
    return (grouped - others).reshape(-1)  # [B]


def _whiten(values: Tensor) -> Tensor:
    """``(x - mean_batch) / (std_batch + eps)`` over the whole batch: [B]."""
    std = values.std() if values.numel() > 1 else values.new_zeros(())  # []
    return (values - values.mean()) / (std + STD_EPS)  # [B]


def reinforce_plus_plus(rewards: Tensor, group_size: int) -> Tensor:
    """``(r - mean_batch) / std_batch``: REINFORCE++'s global normalisation, no per-prompt baseline (Eq. 10).

    The batch mean is the only baseline, so a group whose rewards are all equal still gets a non-zero
    advantage (all right: positive where the batch is mostly wrong).
    """
    return _whiten(rewards)  # [B]


def reinforce_plus_plus_baseline(rewards: Tensor, group_size: int) -> Tensor:
    """REINFORCE++ w/ baseline (Hu et al., 2025): subtract the group mean, then whiten across the batch.

    Unlike ``batch_std`` (which divides by the std of the RAW rewards), the scale is the std of the
    group-centred rewards; their batch mean is 0 with equal groups, subtracted anyway as in verl and OpenRLHF.
    """
    return _whiten(_centered(rewards, group_size).reshape(-1))  # [B]


ADVANTAGE_NORMALIZATIONS: Mapping[str, Callable[[Tensor, int], Tensor]] = {
    "group_std": normalize_by_group_std,
    "batch_std": normalize_by_batch_std,
    "none": no_normalization,
    "rloo": leave_one_out,
    "reinforce_plus_plus": reinforce_plus_plus,
    "reinforce_plus_plus_baseline": reinforce_plus_plus_baseline,
}
"""Advantage estimators by name: each maps ([B] rewards, G) to [B] advantages."""

BATCH_LEVEL = frozenset({"batch_std", "reinforce_plus_plus", "reinforce_plus_plus_baseline"})
"""The estimators whose advantage of a sample depends on other groups' rewards (need the whole batch)."""


T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: str, field: str) -> T:
    """``registry[name]``, or a ConfigError naming ``field``, the valid names and the nearest one.

    Args:
        registry: Names to functions.
        name: The requested name.
        field: The config field the name came from (for the message).

    Returns:
        The registered function.

    Raises:
        ConfigError: ``name`` is not registered.
    """
    if name in registry:
        return registry[name]
    nearest = difflib.get_close_matches(str(name), list(registry), n=1, cutoff=0.4)
    hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
    raise ConfigError(f"{field}={name!r} is not allowed; valid names: {sorted(registry)}{hint}")


def group_advantages(rewards: Tensor, group_size: int, normalization: str = "group_std") -> Tensor:
    """Advantages of B sequences in group layout, normalised by the named choice.

    A group whose rewards are all equal gets advantage 0 under every choice with a per-prompt baseline
    (all but ``reinforce_plus_plus``).

    Args:
        rewards: [B] float rewards, a prompt's ``group_size`` samples adjacent.
        group_size: G, samples per prompt; must divide B.
        normalization: A name in ``ADVANTAGE_NORMALIZATIONS``.

    Returns:
        [B] float32 advantages.

    Raises:
        ConfigError: Unknown ``normalization``, or ``group_size`` that does not divide B.
    """
    normalize = lookup(ADVANTAGE_NORMALIZATIONS, normalization, "advantage_normalization")
    if group_size < 1 or rewards.ndim != 1 or rewards.numel() % group_size:
        raise ConfigError(
            f"group_size={group_size} is not allowed for rewards of shape {tuple(rewards.shape)}; "
            "expected a 1-d tensor whose length is a multiple of group_size"
        )
    if rewards.numel() == 0:  # no groups (a process whose share of the batch is empty)
        return rewards.float()
    return normalize(rewards.float(), group_size)


def zero_variance_groups(rewards: Tensor, group_size: int, tolerance: float = 1e-6) -> Tensor:
    """Which groups' rewards all lie within ``tolerance`` of each other (they carry no gradient).

    The test is ``max - min <= tolerance`` rather than ``std == 0``, so continuous rewards whose
    values differ only by rounding count as equal (the failure of OpenRLHF#1270).

    Args:
        rewards: [B] float rewards in group layout.
        group_size: G.
        tolerance: Largest spread still counted as zero variance.

    Returns:
        [N] bool, True where the group's rewards are all equal.
    """
    grouped = rewards.float().view(-1, group_size)  # [N, G]
    spread = grouped.max(dim=1).values - grouped.min(dim=1).values  # [N]
    return spread <= tolerance  # [N]
