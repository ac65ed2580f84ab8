"""GRPO: critic-free PPO with group-relative advantages (Shao et al., 2024, DeepSeekMath, arXiv:2402.03300).

Read top to bottom: config, the named choices (loss aggregation, KL placement), the loss, the loop.
For each prompt the loop samples ``G`` completions, scores them with the environment's verifier, turns
each reward into an advantage relative to its group (`reasongym.agents.advantages`), and takes ``mu``
optimizer steps of the clipped surrogate on those rollouts. Dr. GRPO's unbiased variant (Liu et al.,
2025, arXiv:2503.20783) is ``advantage_normalization="none"`` with ``loss_aggregation="constant"``.

Every aggregation divides by quantities of the WHOLE batch (its sequence and token counts), passed in by
the loop, so micro-batches with gradient accumulation give exactly the full-batch gradient (the bug class
of trl#3021 and verl#3741, where each micro-batch was normalised by its own token count).

Shapes use the legend of `reasongym.agents.common` (B sequences, T completion tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from reasongym.agents import rl_setup
from reasongym.agents.advantages import ADVANTAGE_NORMALIZATIONS, group_advantages, lookup
from reasongym.agents.common import masked_mean, masked_sum
from reasongym.agents.runtime import session as rl_loop
from reasongym.agents.runtime.session import RLResult
from reasongym.errors import ConfigError


@dataclass(frozen=True)
class GRPOConfig:
    """Hyperparameters of ``train_grpo``. Defaults follow DeepSeekMath Sec. 4.2 unless a comment says otherwise."""

    max_steps: int = 200
    """Rollout batches to train on (each gives ``mu`` optimizer steps); a resumed run counts earlier ones."""
    num_prompts: int = 16
    """Prompts per rollout batch (DeepSeekMath used 1024 per batch, far beyond a CPU; ours is a CPU default)."""
    group_size: int = 64
    """G, completions sampled per prompt (DeepSeekMath Sec. 4.2: 64 outputs per question)."""
    max_new_tokens: int = 1024
    """Longest completion in tokens (DeepSeekMath Sec. 4.2: max length 1024); also Dr. GRPO's constant."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts (1.0: sample from the policy itself, as the objective assumes)."""
    lr: float = 1e-6
    """AdamW learning rate, constant (DeepSeekMath Sec. 4.2: 1e-6). The tiny CPU model needs about 1e-4."""
    kl: str = "k3_loss"
    """Where the KL to the frozen reference goes: ``off``, ``k3_loss`` (DeepSeekMath Eq. 4, in the loss)
    or ``k1_reward`` (log-ratio subtracted from each sequence's reward). A reference is built only if not off."""
    kl_coef: float = 0.04
    """beta, the KL weight (DeepSeekMath Sec. 4.2: 0.04)."""
    clip_eps: float = 0.2
    """epsilon of the clipped ratio, both sides (PPO's 0.2, which DeepSeekMath's Eq. 3 inherits)."""
    mu: int = 1
    """Optimizer steps per rollout batch, each over all of it (DeepSeekMath Sec. 4.2: a single update)."""
    advantage_normalization: str = "group_std"
    """``group_std`` (DeepSeekMath Sec. 4.1.2), ``batch_std``, or ``none`` (Dr. GRPO)."""
    loss_aggregation: str = "seq_mean_token_mean"
    """``seq_mean_token_mean`` (DeepSeekMath Eq. 3: 1/G sum_i 1/|o_i| sum_t), ``token_mean`` (DAPO) or
    ``constant`` (Dr. GRPO: token sum divided by B * max_new_tokens)."""
    micro_batch_size: int | None = None
    """Sequences per forward/backward pass (gradient accumulation); None: the whole batch at once."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this (TRL's default); None does not clip."""
    split: str | None = None
    """Split the training prompts come from; None: ``train`` if the source has it, else its default split
    (a dataset registered with ``reasongym.register_dataset`` has only ``test``)."""
    eval_split: str | None = None
    """Split evaluations draw from; None: the first of ``test``/``validation`` the source has, else its
    default split."""
    difficulty: int | None = None
    """Difficulty of the training (and evaluation) problems; None: the env's default."""
    eval_every: int = 0
    """Greedy pass@1 on ``eval_problems`` problems of ``eval_split`` every this many steps (and at the end);
    0: never."""
    eval_problems: int = 100
    """Problems of each evaluation (the first ones of ``eval_split``)."""
    save_every: int = 0
    """Checkpoint every this many steps (needs a run folder); 0: only at the end."""
    keep_checkpoints: int = 3
    """Newest checkpoints kept on disk."""
    samples_every: int = 10
    """Write a few sampled completions to ``samples.jsonl`` every this many steps; 0: never."""
    entropy_collapse_ratio: float = 0.1
    """Warn once when the policy's token entropy falls below this fraction of its first-step value."""
    seed: int = 0
    """Seeds the global RNGs, the order of training problems and the sampler of every batch."""
    progress_bar: bool = True
    """Show a tqdm bar with live reward, accuracy and tokens/s."""
    tensorboard: bool | None = False
    """Mirror metrics to TensorBoard; None: when it is installed."""

    def __post_init__(self) -> None:
        rl_setup.check_common_fields(self)
        lookup(ADVANTAGE_NORMALIZATIONS, self.advantage_normalization, "advantage_normalization")
        lookup(LOSS_AGGREGATIONS, self.loss_aggregation, "loss_aggregation")
        lookup(KL_MODES, self.kl, "kl")
        if not 0 < self.clip_eps < 1:
            raise ConfigError(f"clip_eps={self.clip_eps!r} is not allowed; expected 0 < clip_eps < 1")
        if self.kl_coef < 0:
            raise ConfigError(f"kl_coef={self.kl_coef!r} is not allowed; expected a float >= 0")


# ------------------------------------------------------------------------------ named choices: aggregation
# Each maps ([B, T] per-token loss, [B, T] mask, batch sequences, batch tokens, max length) to a scalar.
# The counts are those of the whole batch, not of the micro-batch at hand.


def seq_mean_token_mean(
    per_token: Tensor, mask: Tensor, sequences: int, tokens: float, max_len: int
) -> Tensor:
    """Mean over each sequence's tokens, then over sequences (DeepSeekMath Eq. 3)."""
    per_sequence = masked_sum(per_token, mask, dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    return per_sequence.sum() / sequences  # []


def token_mean(per_token: Tensor, mask: Tensor, sequences: int, tokens: float, max_len: int) -> Tensor:
    """Every token of the batch weighs the same (DAPO Sec. 3.3)."""
    return masked_sum(per_token, mask) / max(tokens, 1.0)  # []


def constant_normalizer(
    per_token: Tensor, mask: Tensor, sequences: int, tokens: float, max_len: int
) -> Tensor:
    """Token sum over ``B * max_new_tokens``, a constant, so length does not bias the gradient (Dr. GRPO)."""
    return masked_sum(per_token, mask) / (sequences * max_len)  # []


LOSS_AGGREGATIONS: Mapping[str, Callable[..., Tensor]] = {
    "seq_mean_token_mean": seq_mean_token_mean,
    "token_mean": token_mean,
    "constant": constant_normalizer,
}
"""Loss aggregations by name."""


# ------------------------------------------------------------------------------ named choices: KL placement


def kl_k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """k3 estimator of KL(pi || pi_ref) per token: ``exp(ref - logp) - (ref - logp) - 1`` (DeepSeekMath Eq. 4)."""
    log_ratio = ref_logp - logp  # [B, T]
    return torch.exp(log_ratio) - log_ratio - 1  # [B, T]


def _no_loss_term(logp: Tensor, ref_logp: Tensor | None) -> Tensor:
    return torch.zeros_like(logp)  # [B, T]


def _k3_loss_term(logp: Tensor, ref_logp: Tensor | None) -> Tensor:
    if ref_logp is None:
        raise ConfigError("kl='k3_loss' needs ref_logp (log-probs under the reference model); got None")
    return kl_k3(logp, ref_logp)  # [B, T]


def _no_reward_term(old_logp: Tensor, ref_logp: Tensor | None, mask: Tensor) -> Tensor:
    return old_logp.new_zeros(old_logp.shape[0])  # [B]


def _k1_reward_term(old_logp: Tensor, ref_logp: Tensor | None, mask: Tensor) -> Tensor:
    """Summed k1 estimator ``log pi_old - log pi_ref`` over each sequence's tokens: [B]."""
    if ref_logp is None:
        raise ConfigError("kl='k1_reward' needs ref_logp (log-probs under the reference model); got None")
    return masked_sum(old_logp - ref_logp, mask.to(old_logp.dtype), dim=1)  # [B]


KL_MODES: Mapping[str, tuple[Callable[..., Tensor], Callable[..., Tensor]]] = {
    "off": (_no_loss_term, _no_reward_term),
    "k3_loss": (_k3_loss_term, _no_reward_term),
    "k1_reward": (_no_loss_term, _k1_reward_term),
}
"""KL placements by name: (per-token loss term [B, T], per-sequence reward penalty [B])."""


def kl_reward_penalty(old_logp: Tensor, ref_logp: Tensor | None, mask: Tensor, cfg: GRPOConfig) -> Tensor:
    """``kl_coef`` times the reward-side KL of ``cfg.kl`` per sequence ([B]; zeros unless ``k1_reward``)."""
    reward_term = lookup(KL_MODES, cfg.kl, "kl")[1]
    return cfg.kl_coef * reward_term(old_logp, ref_logp, mask)  # [B]


# ------------------------------------------------------------------------------ loss


def grpo_loss(
    logp: Tensor,
    old_logp: Tensor,
    ref_logp: Tensor | None,
    adv: Tensor,
    mask: Tensor,
    cfg: GRPOConfig,
    *,
    batch_sequences: int | None = None,
    batch_tokens: float | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """GRPO's clipped surrogate plus the KL penalty, to minimise (DeepSeekMath Eq. 3, KL by Eq. 4).

    ``loss = aggregate(-min(r A, clip(r, 1-eps, 1+eps) A) + beta * KL_k3)`` with ``r = exp(logp - old_logp)``,
    aggregated by ``cfg.loss_aggregation`` (Dr. GRPO's ``constant`` uses ``cfg.max_new_tokens``).

    Args:
        logp: [B, T] log-probs of the completion tokens under the policy being trained (with grad).
        old_logp: [B, T] log-probs under the policy that sampled them.
        ref_logp: [B, T] log-probs under the frozen reference, or None when ``cfg.kl`` is not ``k3_loss``.
        adv: [B] one advantage per sequence.
        mask: [B, T] 1 on the tokens that carry loss.
        cfg: Supplies ``clip_eps``, ``kl``, ``kl_coef``, ``loss_aggregation``, ``max_new_tokens``.
        batch_sequences: Sequences in the whole batch when this is one micro-batch of it; None: B.
        batch_tokens: Loss tokens in the whole batch (sum of its mask); None: this mask's sum.

    Returns:
        ``(loss, metrics)``: the scalar loss and, as floats over this call's tokens, ``loss/policy``,
        ``loss/kl``, ``train/clip_low_frac``, ``train/clip_high_frac``, ``train/ratio_mean|min|max``,
        ``train/approx_kl_old`` and ``train/tokens``.
    """
    rl_loop.check_loss_shapes(logp, old_logp, ref_logp, adv, mask)
    aggregate = lookup(LOSS_AGGREGATIONS, cfg.loss_aggregation, "loss_aggregation")
    kl_term = lookup(KL_MODES, cfg.kl, "kl")[0]
    mask = mask.to(logp.dtype)  # [B, T]
    sequences = batch_sequences if batch_sequences is not None else logp.shape[0]
    tokens = batch_tokens if batch_tokens is not None else float(mask.sum())
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    ratio = torch.exp(logp - old_logp)  # [B, T]
    clipped_ratio = ratio.clamp(1 - cfg.clip_eps, 1 + cfg.clip_eps)  # [B, T]
    surrogate = torch.min(ratio * adv, clipped_ratio * adv)  # [B, T]
    kl = kl_term(logp, ref_logp)  # [B, T]
    policy_loss = aggregate(-surrogate, mask, sequences, tokens, cfg.max_new_tokens)  # []
    kl_loss = aggregate(kl, mask, sequences, tokens, cfg.max_new_tokens)  # []
    loss = policy_loss + cfg.kl_coef * kl_loss  # []
    metrics = rl_loop.ratio_metrics(ratio, logp, old_logp, adv, mask, 1 - cfg.clip_eps, 1 + cfg.clip_eps)
    metrics["loss/policy"] = float(policy_loss.detach())
    metrics["loss/kl"] = (
        float(masked_mean(kl_k3(logp.detach(), ref_logp), mask)) if ref_logp is not None else 0.0
    )
    return loss, metrics


# ------------------------------------------------------------------------------ loop


def train_grpo(
    cfg: GRPOConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    run_dir: str | Path | None = None,
    generator: Any | None = None,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
) -> RLResult:
    """Train ``model`` with GRPO on an environment for ``cfg.max_steps`` rollout batches, resuming when possible.

    Args:
        cfg: Hyperparameters.
        model: A causal LM (trained in place, on its device).
        tokenizer: Its tokenizer.
        env_id: A registered environment id, or a built environment.
        run_dir: Folder for config, metrics, samples, checkpoints and the final plot; a folder holding a
            checkpoint is resumed. None: nothing written, no resume.
        generator: The sampler; None builds an ``HFGenerator`` on ``model``.
        eval_fn: Extra evaluation called with the model whenever the built-in one runs.

    Returns:
        An ``RLResult`` with one metrics dict per step.
    """
    session = rl_loop.RLSession.start(
        cfg, model, tokenizer, env_id, algo="grpo", run_dir=run_dir, generator=generator,
        with_reference=cfg.kl != "off", eval_fn=eval_fn,
    )  # fmt: skip
    try:
        for step in session.remaining_steps():
            batch = session.rollouts(cfg.num_prompts)
            ref_logp = session.reference_logprobs(batch)  # [B, T] or None
            rewards = batch.rewards - kl_reward_penalty(batch.old_logp, ref_logp, batch.completion_mask, cfg)
            adv = group_advantages(rewards, cfg.group_size, cfg.advantage_normalization)  # [B]

            def loss_fn(logp, old_logp, ref, adv, mask, **scale):  # noqa: ANN001, ANN003
                return grpo_loss(logp, old_logp, ref, adv, mask, cfg, **scale)

            metrics = session.update(batch, adv, loss_fn, ref_logp=ref_logp)
            metrics.update(batch.metrics())
            session.finish_step(step, metrics, batch)
    finally:
        session.close()
    return session.result()
