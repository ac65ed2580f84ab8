"""The built-in policy losses (the surrogate before aggregation) that GRPO and DAPO choose from by name, in the
open registry `reasongym.agents.registries.POLICY_LOSSES` (a user's loss joins it with ``register_policy_loss``).

Each maps ([B, T] logp with grad, [B, T] old_logp, [B, 1] adv, [B, T] mask, the algorithm's config) to a
`Surrogate`: the per-token loss to aggregate, the ratio it weighs (for the diagnostics) and which tokens its
clip changed. Each row's quantities depend on that row only, so micro-batches split them exactly.

``ppo_clip`` reads the config's ``clip_range`` (GRPO: ``1 -+ clip_eps``; DAPO's clip-higher:
``(1 - eps_low, 1 + eps_high)``), GSPO's its ``gspo_clip`` and CISPO's its ``cispo_max_weight`` (GRPO's
fields). Shapes use the legend of `reasongym.agents.common`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import Tensor

from reasongym.agents.common import masked_sum


class Surrogate(NamedTuple):
    """A policy loss before aggregation, and what its clip did."""

    per_token: Tensor
    """[B, T] loss of each token, to aggregate over the mask."""
    ratio: Tensor
    """[B, T] the importance ratio the loss weighs (a sequence's ratio repeated on its tokens for GSPO)."""
    clipped_low: Tensor
    """[B, T] bool: tokens whose gradient the lower bound changed."""
    clipped_high: Tensor
    """[B, T] bool: tokens whose gradient the upper bound changed."""


def ppo_clip(logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, cfg: Any) -> Surrogate:
    """PPO's clipped surrogate per token, ``-min(r A, clip(r, low, high) A)`` with ``(low, high) =
    cfg.clip_range`` (DeepSeekMath Eq. 3: ``1 -+ eps``; DAPO Eq. 8, clip-higher: ``1 - eps_low, 1 + eps_high``).

    A clipped token (``r > 1 + eps`` with ``A > 0``, or ``r < 1 - eps`` with ``A < 0``) gets no gradient.
    """
    low, high = cfg.clip_range
    ratio = torch.exp(logp - old_logp)  # [B, T]
    surrogate = torch.min(ratio * adv, ratio.clamp(low, high) * adv)  # [B, T]
    return Surrogate(-surrogate, ratio, (ratio < low) & (adv < 0), (ratio > high) & (adv > 0))


def _sequence_ratio(logp: Tensor, old_logp: Tensor, mask: Tensor) -> Tensor:
    """GSPO's ``s_i = exp(1/|o_i| sum_t (logp - old_logp))``, the geometric mean of token ratios: [B, 1]."""
    log_ratio = masked_sum(logp - old_logp, mask, dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    return torch.exp(log_ratio)[:, None]  # [B, 1]


def gspo(logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, cfg: Any) -> Surrogate:
    """GSPO: ``-min(s_i A_i, clip(s_i, 1 - left, 1 + right) A_i)`` per sequence (Zheng et al., 2025,
    arXiv:2507.18071, Eq. 5, with ``s_i`` of Eq. 7), repeated on the sequence's tokens.

    With ``seq_mean_token_mean`` this is the paper's ``1/G sum_i``: a whole sequence is clipped or not.
    """
    low, high = 1 - cfg.gspo_clip[0], 1 + cfg.gspo_clip[1]
    ratio = _sequence_ratio(logp, old_logp, mask)  # [B, 1]
    surrogate = torch.min(ratio * adv, ratio.clamp(low, high) * adv)  # [B, 1]
    clipped_low, clipped_high = (ratio < low) & (adv < 0), (ratio > high) & (adv > 0)  # [B, 1]
    return Surrogate(*(x.expand_as(logp) for x in (-surrogate, ratio, clipped_low, clipped_high)))


def gspo_token(logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, cfg: Any) -> Surrogate:
    """GSPO-token: ``s_it = sg[s_i] pi(y_it) / sg[pi(y_it)]`` clipped like GSPO, per token (GSPO Eq. 13-14).

    Its value is ``s_i`` on every token and, with one advantage per sequence, its gradient is GSPO's; it
    exists so that a per-token advantage could be used (every advantage estimator here gives one per sequence).
    """
    low, high = 1 - cfg.gspo_clip[0], 1 + cfg.gspo_clip[1]
    sequence = _sequence_ratio(logp, old_logp, mask).detach()  # [B, 1]
    ratio = sequence * torch.exp(logp - logp.detach())  # [B, T], value s_i, gradient through each token
    surrogate = torch.min(ratio * adv, ratio.clamp(low, high) * adv)  # [B, T]
    return Surrogate(-surrogate, ratio.detach(), (ratio < low) & (adv < 0), (ratio > high) & (adv > 0))


def cispo(logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, cfg: Any) -> Surrogate:
    """CISPO: ``-sg(min(r, max_weight)) A logp`` per token (MiniMax-M1, arXiv:2506.13585, Eq. 4-5).

    The clip caps the importance WEIGHT, which is detached; the gradient of every token is
    ``-min(r, max_weight) A grad(logp)``, never 0, so no token is dropped (in ``ppo_clip`` a clipped token's
    is). The loss value carries ``logp`` and is not comparable with the other losses'.
    """
    ratio = torch.exp(logp - old_logp)  # [B, T]
    weight = ratio.clamp(max=cfg.cispo_max_weight).detach()  # [B, T]
    never = torch.zeros_like(ratio, dtype=torch.bool)  # [B, T]: no lower cap
    return Surrogate(-weight * adv * logp, ratio, never, ratio > cfg.cispo_max_weight)
