"""GRPO: critic-free PPO with group-relative advantages (Shao et al., 2024, DeepSeekMath, arXiv:2402.03300).

Read top to bottom: the named choices (loss aggregation, KL placement, policy loss), the loss, the loop.
The config, `GRPOConfig`, holds GRPO's own mathematics and lives in `reasongym.agents.algorithm_configs`
(torch-free, so that flags and ``--help`` answer before torch loads); what every trainer shares (steps, optimizer, data,
logging; prompts, group size, lengths, temperature) comes in `RunConfig` and `RolloutConfig`.
For each prompt the loop samples ``G`` completions, scores them with the environment's verifier, turns
each reward into an advantage (`reasongym.agents.advantages`), and takes ``mu`` optimizer steps of the
policy loss on those rollouts. The family around GRPO is three independent named choices:

- the advantage estimator (``advantage_normalization``): GRPO's ``group_std``, ``batch_std``, Dr. GRPO's
  ``none``, ``rloo``, ``reinforce_plus_plus``, ``reinforce_plus_plus_baseline``;
- the policy loss (``policy_loss``): PPO's clipped token ratio ``ppo_clip`` (GRPO), GSPO's sequence
  ratio ``gspo`` and ``gspo_token``, CISPO's clipped-and-detached weight ``cispo``;
- the aggregation (``loss_aggregation``): ``seq_mean_token_mean``, ``token_mean`` (DAPO, TRL's ``bnpo``),
  ``constant`` (Dr. GRPO).

Dr. GRPO (Liu et al., 2025, arXiv:2503.20783) is ``advantage_normalization="none"`` with
``loss_aggregation="constant"``; GSPO's paper setup is ``policy_loss="gspo"`` with the default
``seq_mean_token_mean``; CISPO's is ``policy_loss="cispo"``, ``loss_aggregation="token_mean"``, ``kl="off"``.

Names: the ratio here is always pi_theta / pi_old, the policy being trained against the one that
sampled; GSPO makes it one per sequence (TRL: ``importance_sampling_level="sequence"``), and that is part
of the loss, so it is a ``policy_loss``. The correction for a sampler whose log-probs differ from the
trainer's (a vLLM engine: truncated or masked importance sampling, TRL's ``vllm_importance_sampling_mode``)
is another quantity, multiplied onto any of these losses, and keeps the name "importance-sampling
correction" (issue 24).

Every aggregation divides by quantities of the WHOLE batch (its `BatchTotals`), passed in by the loop, so micro-batches with gradient accumulation give exactly the full-batch gradient (the bug class
of trl#3021 and verl#3741, where each micro-batch was normalised by its own token count).

Under ``torchrun`` or ``accelerate launch`` each process samples its share of every batch's prompts and the
update is the one of a single process on all of them (`reasongym.agents.runtime.session`). Shapes use the
legend of `reasongym.agents.common` (B sequences, T completion tokens).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.advantages import group_advantages, lookup
from reasongym.agents.algorithm_configs import GRPOConfig
from reasongym.agents.common import masked_mean, masked_sum
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.presets import shared_configs
from reasongym.agents.registries import POLICY_LOSSES
from reasongym.agents.runtime.hooks import StepHook
from reasongym.agents.runtime.loop import run_steps
from reasongym.agents.runtime.session import EvalFn, RLResult, RLSession
from reasongym.agents.runtime.setup import start_session
from reasongym.agents.runtime.update import BatchTotals, check_loss_shapes, clip_metrics, totals_of
from reasongym.errors import ConfigError

# ------------------------------------------------------------------------------ named choices: aggregation
# Each maps ([B, T] per-token loss, [B, T] mask, the whole batch's totals) to a scalar. The totals are
# those of the whole batch, not of the micro-batch at hand.


def seq_mean_token_mean(per_token: Tensor, mask: Tensor, totals: BatchTotals) -> Tensor:
    """Mean over each sequence's tokens, then over sequences (DeepSeekMath Eq. 3)."""
    per_sequence = masked_sum(per_token, mask, dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    return per_sequence.sum() / totals.sequences  # []


def token_mean(per_token: Tensor, mask: Tensor, totals: BatchTotals) -> Tensor:
    """Every token of the batch weighs the same (DAPO Sec. 3.3)."""
    return masked_sum(per_token, mask) / max(totals.tokens, 1.0)  # []


def constant_normalizer(per_token: Tensor, mask: Tensor, totals: BatchTotals) -> Tensor:
    """Token sum over ``B * max_new_tokens``, a constant, so length does not bias the gradient (Dr. GRPO)."""
    return masked_sum(per_token, mask) / (totals.sequences * totals.max_new_tokens)  # []


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
    totals: BatchTotals | None = None,
    weights: Tensor | None = None,
    *,
    cfg: GRPOConfig,
) -> tuple[Tensor, dict[str, float]]:
    """GRPO's clipped surrogate plus the KL penalty, to minimise (DeepSeekMath Eq. 3, KL by Eq. 4).

    ``loss = aggregate(w * surrogate + beta * KL_k3)`` with the clipped surrogate
    ``-min(r A, clip(r, 1-eps, 1+eps) A)`` and ``r = exp(logp - old_logp)``, aggregated by ``cfg.loss_aggregation``
    over the whole batch's ``totals``; ``cfg.policy_loss`` replaces the clipped surrogate by GSPO's or CISPO's
    (the registry `POLICY_LOSSES`); ``w`` is the off-policy correction's weight of each token (1 without one).

    Args:
        logp: [B, T] log-probs of the completion tokens under the policy being trained (with grad).
        old_logp: [B, T] log-probs under the policy that sampled them.
        ref_logp: [B, T] log-probs under the frozen reference, or None when ``cfg.kl`` is not ``k3_loss``.
        adv: [B] one advantage per sequence.
        mask: [B, T] 1 on the tokens that carry loss.
        totals: The whole batch's sequence and token counts and length limit when this is one micro-batch
            of it; None: this call's own (and ``T`` as the length limit).
        weights: [B, T] importance-sampling correction of a sampler whose log-probs are not the trainer's
            (`reasongym.agents.offpolicy`), multiplied onto the policy term only; None: 1.
        cfg: Supplies ``policy_loss`` and its clip, ``kl``, ``kl_coef`` and ``loss_aggregation``.

    Returns:
        ``(loss, metrics)``: the scalar loss and, as floats over this call's tokens, ``loss/policy``,
        ``loss/kl``, ``train/clip_low_frac``, ``train/clip_high_frac``, ``train/ratio_mean|min|max``,
        ``train/approx_kl_old`` and ``train/tokens``.
    """
    check_loss_shapes(logp, old_logp, ref_logp, adv, mask)
    aggregate = lookup(LOSS_AGGREGATIONS, cfg.loss_aggregation, "loss_aggregation")
    surrogate_of = POLICY_LOSSES[cfg.policy_loss]
    kl_term = lookup(KL_MODES, cfg.kl, "kl")[0]
    mask = mask.to(logp.dtype)  # [B, T]
    totals = totals or totals_of(mask, max_new_tokens=logp.shape[1])
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    surrogate = surrogate_of(logp, old_logp, adv, mask, cfg)  # [B, T] each
    per_token = surrogate.per_token  # [B, T]
    if weights is not None:
        per_token = per_token * weights.to(logp.dtype)  # [B, T]
    kl = kl_term(logp, ref_logp)  # [B, T]
    policy_loss = aggregate(per_token, mask, totals)  # []
    kl_loss = aggregate(kl, mask, totals)  # []
    loss = policy_loss + cfg.kl_coef * kl_loss  # []
    metrics = clip_metrics(
        surrogate.ratio, logp, old_logp, mask, surrogate.clipped_low, surrogate.clipped_high
    )
    metrics["loss/policy"] = float(policy_loss.detach())
    metrics["loss/kl"] = (
        float(masked_mean(kl_k3(logp.detach(), ref_logp), mask)) if ref_logp is not None else 0.0
    )
    return loss, metrics


# ------------------------------------------------------------------------------ loop


def mask_truncated(mask: Tensor, truncated: Tensor) -> Tensor:
    """``mask`` with the rows of completions cut at the length limit zeroed: [B, T]."""
    return mask * (~truncated.bool()).to(mask.dtype)[:, None]  # [B, T]


def step_advantages(batch: Any, ref_logp: Tensor | None, cfg: GRPOConfig, group_size: int) -> Tensor:
    """[B] this rank's advantages: the rewards (less the KL penalty under ``kl='reward'``) of every rank's
    groups (``batch_std`` scales by the whole batch), ungradable samples (a verdict that timed out) left out."""
    rewards = batch.rewards - kl_reward_penalty(batch.old_logp, ref_logp, batch.completion_mask, cfg)  # [B]
    rewards = distributed.all_gather_groups(rewards, group_size)  # [B_all]
    graded = distributed.all_gather_groups(batch.gradable, group_size)  # [B_all]
    adv = group_advantages(rewards, group_size, cfg.advantage_normalization, valid=graded)  # [B_all]
    return distributed.shard_groups(adv, group_size)  # [B]


def grpo_update(
    session: RLSession, batch: Any, cfg: GRPOConfig, group_size: int, loss: Any
) -> dict[str, float]:
    """One step's update on its rollouts: reference log-probs, advantages, the loss mask, then ``mu``
    optimizer steps (with the off-policy correction of rows another engine sampled); the step's metrics."""
    ref_logp = session.reference_logprobs(batch)  # [B, T] or None
    adv = step_advantages(batch, ref_logp, cfg, group_size)  # [B]
    mask = batch.graded_mask  # [B, T] ungradable samples are out of the loss too
    if cfg.mask_truncated_completions:
        mask = mask_truncated(mask, batch.truncated)  # [B, T]
    correction = cfg.importance_sampling
    metrics = session.update(batch, adv, loss, mu=cfg.mu, ref_logp=ref_logp, mask=mask, correction=correction)
    return {**metrics, **session.rollout_metrics(batch)}


def train_grpo(
    cfg: GRPOConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    run: RunConfig | None = None,
    rollout: RolloutConfig | None = None,
    run_dir: str | Path | None = None,
    generator: Any | None = None,
    eval_fn: EvalFn | None = None,
    hooks: Iterable[StepHook] = (),
) -> RLResult:
    """Train ``model`` with GRPO on an environment for ``run.max_steps`` rollout batches, resuming when possible.

    Args:
        cfg: GRPO's own hyperparameters.
        model: A causal LM (trained in place, on its device).
        tokenizer: Its tokenizer.
        env_id: A registered environment id, or a built environment.
        run: Length, optimizer, cadence, data and logging; None: the ``default`` preset's, as the command line.
        rollout: Sampling of the rollouts; None: the ``default`` preset's, as the command line.
        run_dir: Folder for config, metrics, samples, checkpoints and the final plot; a folder holding a
            checkpoint is resumed. None: nothing written, no resume.
        generator: The sampler; None: the one ``rollout.engine`` names, built on ``model``.
        eval_fn: Extra evaluation called with the model whenever the built-in one runs.
        hooks: Step hooks that see each step or stop the run (`reasongym.agents.runtime.hooks`).

    Returns:
        An ``RLResult`` with one metrics dict per step.
    """
    default = shared_configs("default", "grpo")
    run, rollout = run or default["run"], rollout or default["rollout"]
    record = {"algo": "grpo", "run": run, "rollout": rollout, "grpo": cfg}
    session = start_session(
        run,
        rollout,
        model,
        tokenizer,
        env_id,
        algo="grpo",
        config_record=record,
        run_dir=run_dir,
        generator=generator,
        with_reference=cfg.kl != "off",
        eval_fn=eval_fn,
        hooks=hooks,
        # One update, and nothing before it reads the old log-probs (k1_reward's penalty does).
        old_logp_in_update=cfg.mu == 1 and cfg.kl != "k1_reward",
    )
    loss = functools.partial(grpo_loss, cfg=cfg)

    def one_step() -> tuple[Any, dict[str, float]]:
        batch = session.rollouts()
        return batch, grpo_update(session, batch, cfg, rollout.group_size, loss)

    return run_steps(session, one_step)
