"""Off-policy correction: when the sampler's log-probs are not the trainer's.

An inference engine (vLLM) samples with its own kernels, precision and batching, and possibly with weights
a step behind; its probability of a sampled token, mu, is then not the trainer's, pi_old, for the same
weights. The trainer scores the rollouts itself (``old_logp``: the ratio of the clipped objective stays
pi_theta / pi_old, starting at exactly 1) and weighs each token's policy loss by the importance ratio
``rho = pi_old / mu`` so that the gradient is that of samples drawn from pi_old. Unbounded, rho has a huge
variance (a token the engine found unlikely and the trainer likely), so it is bounded (Yao et al., 2025,
"Your efficient RL framework secretly brings you off-policy RL training"; TRL's
``vllm_importance_sampling_mode``, whose names are kept here):

- ``token_truncate``: each token's rho, clamped to ``[clip_min, clip_max]`` (truncated IS, TIS);
- ``token_mask``: each token's rho, and 0 (the token is dropped) where it leaves ``[clip_min, clip_max]``;
- ``sequence_truncate``: one rho per sequence, the product of its tokens' (sum of log-ratios), clamped;
- ``sequence_mask``: that sequence rho, and 0 for the whole sequence where it leaves the band (masked IS);
- ``off``: weight 1 everywhere (the mismatch is still measured).

Each is a named function from ([B, T] log rho, [B, T] mask, the config) to [B, T] weights, in
`IMPORTANCE_SAMPLING_CORRECTIONS`. The weights multiply the per-token policy loss of any algorithm (GRPO,
DAPO, and whichever surrogate a config picks) before aggregation; the KL term is not weighted (TRL does
the same). `mismatch_metrics` is what a trainer logs every step under ``sampler/``. The update applies the
correction micro-batch by micro-batch (`reasongym.agents.runtime.update.correction_of`), so that the trainer's
log-probs can come from the update's own forward pass.

When it applies: only when the rollouts' log-probs come from another engine than the trained module (a
vLLM engine, a served model that reports log-probs). The in-process sampler (`HFGenerator` on the policy
itself) computes them with the trainer's own forward pass, so rho is 1 up to float rounding and no
correction (and no second forward pass) is made. Shapes use the legend of `reasongym.agents.common`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import Tensor

from reasongym.agents.advantages import lookup
from reasongym.agents.algorithm_configs import ImportanceSamplingConfig
from reasongym.agents.common import masked_mean, masked_sum

# ------------------------------------------------------------------------------ named choices
# Each maps ([B, T] log rho = old_logp - sampler_logp, [B, T] mask, the config) to [B, T] weights.


def _sequence_log_ratio(log_ratio: Tensor, mask: Tensor) -> Tensor:
    """One log rho per sequence, the sum of its tokens' (the log of the product of token ratios): [B, 1]."""
    return masked_sum(log_ratio, mask, dim=1)[:, None]  # [B, 1]


def _truncate(log_ratio: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    low, high = cfg.bounds
    return torch.exp(log_ratio).clamp(min=low, max=high)


def _mask(log_ratio: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    low, high = cfg.bounds
    ratio = torch.exp(log_ratio)
    return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)


def no_correction(log_ratio: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    """Weight 1 on every loss token: the sampler's probabilities are taken for the trainer's."""
    return torch.ones_like(log_ratio) * mask  # [B, T]


def token_truncate(log_ratio: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    """Truncated IS per token: ``clamp(rho_t, C_min, C_max)``."""
    return _truncate(log_ratio, cfg) * mask  # [B, T]


def token_mask(log_ratio: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    """Masked IS per token: ``rho_t`` inside ``[C_min, C_max]``, else 0 (the token leaves the loss)."""
    return _mask(log_ratio, cfg) * mask  # [B, T]


def sequence_truncate(log_ratio: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    """Truncated IS per sequence: ``clamp(prod_t rho_t, C_min, C_max)`` on each of its tokens."""
    weight = _truncate(_sequence_log_ratio(log_ratio, mask), cfg)  # [B, 1]
    return weight.expand_as(log_ratio) * mask  # [B, T]


def sequence_mask(log_ratio: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig) -> Tensor:
    """Masked IS per sequence: ``prod_t rho_t`` inside ``[C_min, C_max]``, else 0 for the whole sequence."""
    weight = _mask(_sequence_log_ratio(log_ratio, mask), cfg)  # [B, 1]
    return weight.expand_as(log_ratio) * mask  # [B, T]


IMPORTANCE_SAMPLING_CORRECTIONS: Mapping[
    str, Callable[[Tensor, Tensor, ImportanceSamplingConfig], Tensor]
] = {
    "off": no_correction,
    "token_truncate": token_truncate,
    "token_mask": token_mask,
    "sequence_truncate": sequence_truncate,
    "sequence_mask": sequence_mask,
}
"""Importance-sampling corrections by name (TRL's ``vllm_importance_sampling_mode`` names, and ``off``)."""


@torch.no_grad()
def importance_weights(
    old_logp: Tensor, sampler_logp: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig
) -> tuple[Tensor, dict[str, float]]:
    """The correction's weights and the sampler-trainer mismatch of one batch.

    Args:
        old_logp: [B, T] log-probs of the sampled tokens under the trainer (its own forward pass).
        sampler_logp: [B, T] log-probs the sampler reported for them.
        mask: [B, T] 1 on the tokens that carry loss.
        cfg: The correction and its band.

    Returns:
        ``([B, T] weights, metrics)``: weights 0 where ``mask`` is 0; `mismatch_metrics` of the batch.
    """
    correction = lookup(IMPORTANCE_SAMPLING_CORRECTIONS, cfg.mode, "importance_sampling.mode")
    mask = mask.to(old_logp.dtype)  # [B, T]
    log_ratio = (old_logp - sampler_logp.to(old_logp.dtype)) * mask  # [B, T]
    weights = correction(log_ratio, mask, cfg)  # [B, T]
    return weights, mismatch_metrics(log_ratio, weights, mask, cfg)


@torch.no_grad()
def mismatch_metrics(
    log_ratio: Tensor, weights: Tensor, mask: Tensor, cfg: ImportanceSamplingConfig
) -> dict[str, float]:
    """``sampler/`` metrics of a batch: how far the sampler is from the trainer, and what the correction did.

    ``kl_k3`` estimates KL(mu || pi_old) per token from the samples (``rho - 1 - log rho``, k3, always >= 0);
    ``logp_diff_mean|max`` are ``|log pi_old - log mu|``; ``ratio_min|max`` the raw rho before the band, per
    token or per sequence as the mode's level; ``masked_frac`` the share of loss tokens whose weight is 0
    (dropped by a ``*_mask`` mode), ``truncated_frac`` the share a ``*_truncate`` mode clamped;
    ``weight_mean`` the mean weight over loss tokens. ``sampler/tokens`` weighs them when ranks merge.
    """
    live = mask != 0  # [B, T]
    ratio = torch.exp(log_ratio)  # [B, T]
    sequence_level = cfg.mode.startswith("sequence")
    level_ratio = torch.exp(_sequence_log_ratio(log_ratio, mask)) if sequence_level else ratio  # [B, 1|T]
    level_live = live.any(dim=1, keepdim=True) if sequence_level else live  # [B, 1|T]
    picked = level_ratio[level_live]
    low, high = cfg.bounds
    outside = ((level_ratio < low) | (level_ratio > high)).expand_as(ratio) & live  # [B, T]
    truncating = cfg.mode.endswith("truncate")
    any_live = bool(live.any())
    return {
        "sampler/kl_k3": float(masked_mean(ratio - 1 - log_ratio, mask)),
        "sampler/logp_diff_mean": float(masked_mean(log_ratio.abs(), mask)),
        "sampler/logp_diff_max": float(log_ratio.abs()[live].max()) if any_live else 0.0,
        "sampler/ratio_min": float(picked.min()) if picked.numel() else 1.0,
        "sampler/ratio_max": float(picked.max()) if picked.numel() else 1.0,
        "sampler/masked_frac": float(masked_mean(((weights == 0) & live).to(mask.dtype), mask)),
        "sampler/truncated_frac": float(masked_mean(outside.to(mask.dtype), mask)) if truncating else 0.0,
        "sampler/weight_mean": float(masked_mean(weights, mask)),
        "sampler/tokens": float(mask.sum()),
    }
