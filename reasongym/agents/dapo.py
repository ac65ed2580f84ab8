"""DAPO: decoupled clip and dynamic sampling policy optimisation (Yu et al., 2025, arXiv:2503.14476).

Read top to bottom: the reward and batch helpers, the loss, the loop. The config, `DAPOConfig` (in the
torch-free `reasongym.agents.algorithm_configs`), holds DAPO's own mathematics; the shared settings come in `RunConfig` and `RolloutConfig`. DAPO is GRPO without the
KL term and with four changes (paper Sec. 3): clip-higher (``eps_high > eps_low``, against entropy
collapse), dynamic sampling (groups whose rewards are all equal carry no gradient; drop them and sample
again until the batch is full, here with a cap on extra rounds after which the partial batch trains),
a token-level loss (every token of the batch weighs the same), and overlong handling (mask truncated
completions out, and/or a linear reward penalty in a buffer before the length limit).

The loss divides by the token count of the WHOLE batch, passed in by the loop, so micro-batches with
gradient accumulation give exactly the full-batch gradient. Shapes use the legend of
`reasongym.agents.common`; N = B // G groups.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.advantages import group_advantages, zero_variance_groups
from reasongym.agents.algorithm_configs import DAPOConfig
from reasongym.agents.common import masked_sum
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.presets import shared_configs
from reasongym.agents.registries import ADVANTAGE_ESTIMATORS, POLICY_LOSSES
from reasongym.agents.runtime.hooks import StepHook
from reasongym.agents.runtime.loop import run_steps
from reasongym.agents.runtime.session import EvalFn, RLResult, RLSession
from reasongym.agents.runtime.setup import start_session
from reasongym.agents.runtime.update import BatchTotals, check_loss_shapes, clip_metrics
from reasongym.errors import ConfigError
from reasongym.rollouts.batch import RolloutBatch


def overlong_buffer_tokens(cfg: DAPOConfig, max_new_tokens: int) -> int:
    """L_cache in tokens: ``overlong_buffer``, or when None ``min(4096, max_new_tokens // 5)``.

    Raises:
        ConfigError: ``overlong_buffer`` does not fit below ``max_new_tokens``.
    """
    if cfg.overlong_buffer is None:
        # The paper pairs a 4,096-token buffer with L_max = 20,480 (Sec. 4.1), a fifth of it; shorter
        # limits keep that fraction, so the default fits any max_new_tokens.
        return min(4096, max_new_tokens // 5)
    if cfg.overlong_buffer >= max_new_tokens:
        raise ConfigError(
            f"overlong_buffer={cfg.overlong_buffer} is not allowed; expected 0 <= overlong_buffer < "
            f"max_new_tokens={max_new_tokens}, or None for min(4096, max_new_tokens // 5)"
        )
    return cfg.overlong_buffer


# ------------------------------------------------------------------------------ reward shaping and filters


def overlong_penalty(lengths: Tensor, cfg: DAPOConfig, max_new_tokens: int) -> Tensor:
    """Soft overlong punishment per sequence (DAPO Eq. 13), to add to the reward: 0 or negative, [B].

    0 up to ``L_max - L_cache`` tokens, then falling linearly to ``-overlong_penalty`` at ``L_max``
    (``max_new_tokens``), and ``-overlong_penalty`` beyond. A buffer of 0 turns it off.
    """
    buffer = overlong_buffer_tokens(cfg, max_new_tokens)
    if buffer == 0:
        return torch.zeros(lengths.shape, dtype=torch.float32, device=lengths.device)  # [B]
    safe = max_new_tokens - buffer
    excess = (lengths.float() - safe).clamp(min=0.0, max=float(buffer))  # [B]
    return -cfg.overlong_penalty * excess / buffer  # [B]


def dynamic_sampling_filter(
    rewards: Tensor, correct: Tensor, group_size: int, cfg: DAPOConfig, *, valid: Tensor | None = None
) -> Tensor:
    """Which groups to keep: task rewards not all equal (within the tolerance) and accuracy inside the band.

    With 0/1 rewards this is DAPO Eq. 11, ``0 < #correct < G``. Pass the task rewards BEFORE the overlong
    penalty: a group that is all wrong (or all right) carries no signal about correctness, and length
    shaping alone would otherwise keep it.

    Args:
        rewards: [B] task rewards, without length shaping, in group layout.
        correct: [B] bool, whether each completion was correct.
        group_size: G.
        cfg: Supplies ``zero_variance_tolerance`` and ``accuracy_band``.
        valid: [B] bool, the graded rows (an ungradable one has no reward and counts for nothing); None: all.

    Returns:
        [N] bool, True for the groups to train on.
    """
    keep = ~zero_variance_groups(rewards, group_size, cfg.zero_variance_tolerance, valid=valid)  # [N]
    if cfg.accuracy_band is not None:
        graded = torch.ones_like(correct) if valid is None else valid  # [B]
        hits = (correct & graded).float().view(-1, group_size).sum(dim=1)  # [N]
        accuracy = hits / graded.float().view(-1, group_size).sum(dim=1).clamp(min=1)  # [N]
        lo, hi = cfg.accuracy_band
        keep &= (accuracy >= lo) & (accuracy <= hi)  # [N]
    return keep


def overlong_filter(mask: Tensor, truncated: Tensor) -> Tensor:
    """``mask`` with the rows of truncated completions zeroed (overlong filtering, DAPO Sec. 3.4): [B, T]."""
    return mask * (~truncated.bool()).to(mask.dtype)[:, None]  # [B, T]


def batch_advantages(
    rewards: Tensor, group_size: int, cfg: DAPOConfig, info: distributed.DistInfo, valid: Tensor | None = None
) -> Tensor:
    """[B] advantages of this rank's kept groups, by ``cfg.advantage_normalization``; rows not ``valid``
    (ungradable; None: every row counts) are left out of every statistic and get 0.

    A batch-level estimator sees every rank's kept groups (a rank's share of the kept batch is not a
    `distributed.shard_groups` share, so the rewards are gathered whole and this rank's rows sliced back).
    """
    name = cfg.advantage_normalization
    valid = torch.ones_like(rewards, dtype=torch.bool) if valid is None else valid  # [B]
    if not ADVANTAGE_ESTIMATORS.has(name, "batch_level") or distributed.is_alone(info):
        return group_advantages(rewards, group_size, name, valid=valid)  # [B]
    parts = distributed.all_gather_objects((rewards.detach().float().cpu(), valid.cpu()), info)
    start = sum(len(part[0]) for part in parts[: info.rank])
    every = group_advantages(
        torch.cat([part[0] for part in parts]), group_size, name, valid=torch.cat([part[1] for part in parts])
    )  # [B_all]
    return every[start : start + len(rewards)].to(rewards.device)  # [B]


# ------------------------------------------------------------------------------ loss


def dapo_loss(
    logp: Tensor,
    old_logp: Tensor,
    ref_logp: Tensor | None,
    adv: Tensor,
    mask: Tensor,
    totals: BatchTotals | None = None,
    weights: Tensor | None = None,
    *,
    cfg: DAPOConfig,
) -> tuple[Tensor, dict[str, float]]:
    """DAPO's token-level clip-higher surrogate, to minimise (DAPO Eq. 8; no KL term): the named policy loss
    ``ppo_clip`` (`reasongym.agents.policy_losses`) with DAPO's ``clip_range``, aggregated over tokens.

    ``loss = sum_{i,t} -w min(r A, clip(r, 1 - eps_low, 1 + eps_high) A) / sum_i |o_i|`` with
    ``r = exp(logp - old_logp)``, the sum running over the masked tokens of the whole batch; ``w`` is the
    off-policy correction's weight of each token (1 without one).

    Args:
        logp: [B, T] log-probs of the completion tokens under the policy being trained (with grad).
        old_logp: [B, T] log-probs under the policy that sampled them.
        ref_logp: Must be None: DAPO drops the KL term (paper Sec. 2.3); the argument is there because
            every loss the loop calls has the same interface (`PolicyLoss`).
        adv: [B] one advantage per sequence.
        mask: [B, T] 1 on the tokens that carry loss (truncated rows zeroed under overlong filtering).
        totals: The whole batch's loss-token count when this is one micro-batch; None: this mask's sum.
        weights: [B, T] importance-sampling correction of a sampler whose log-probs are not the trainer's
            (`reasongym.agents.offpolicy`); None: 1.
        cfg: Supplies ``eps_low`` and ``eps_high``.

    Returns:
        ``(loss, metrics)`` with ``loss/policy``, ``train/clip_low_frac``, ``train/clip_high_frac``,
        ``train/ratio_mean|min|max``, ``train/approx_kl_old`` and ``train/tokens`` over this call's tokens.
    """
    check_loss_shapes(logp, old_logp, None, adv, mask)
    if ref_logp is not None:
        raise ConfigError("dapo_loss got ref_logp; DAPO has no KL term (paper Sec. 2.3), pass None")
    mask = mask.to(logp.dtype)  # [B, T]
    tokens = totals.tokens if totals is not None else float(mask.sum())
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    surrogate = POLICY_LOSSES["ppo_clip"](logp, old_logp, adv, mask, cfg)  # clip-higher: cfg.clip_range
    per_token = surrogate.per_token  # [B, T]
    if weights is not None:
        per_token = per_token * weights.to(logp.dtype)  # [B, T]
    loss = masked_sum(per_token, mask) / max(tokens, 1.0)  # []
    metrics = clip_metrics(
        surrogate.ratio, logp, old_logp, mask, surrogate.clipped_low, surrogate.clipped_high
    )
    metrics["loss/policy"] = float(loss.detach())
    return loss, metrics


# ------------------------------------------------------------------------------ loop


def first_kept(keep: Sequence[bool], already: int, wanted: int) -> list[bool]:
    """Which of a round's groups join the batch: those kept, while fewer than ``wanted`` are in it.

    Args:
        keep: One flag per group of the round, in problem order (every rank's groups).
        already: Groups kept by the batch's earlier rounds.
        wanted: Groups the batch holds at most (``num_prompts``).

    Returns:
        One flag per group: kept, and among the first ``wanted`` kept groups of the batch so far.
    """
    chosen, count = [], already
    for flag in keep:
        chosen.append(bool(flag) and count < wanted)
        count += bool(flag)
    return chosen


def sample_training_batch(
    session: RLSession, cfg: DAPOConfig, rollout: RolloutConfig
) -> tuple[RolloutBatch | None, dict[str, float]]:
    """Sample rounds until ``num_prompts`` informative groups are kept or ``max_extra_rounds`` ran out.

    Groups are filtered on their task rewards; the overlong penalty then shapes the kept groups' rewards.
    Across processes each rank samples its share of every round, the kept groups are counted over every
    rank (the batch is full when the global count is), and the batch is the first ``num_prompts`` kept
    groups in problem order, exactly as one process would keep them; each rank returns its part of it.

    Returns:
        ``(batch, metrics)``: the kept groups (rewards shaped by the overlong penalty), cut to
        ``num_prompts`` groups, or None when no rank kept a group (a rank whose part is empty gets an empty
        batch); rollout metrics cover every sampled group of every rank.
    """
    sampled, kept, kept_groups, extra_rounds = [], [], 0, 0
    wanted, group_size = rollout.num_prompts, rollout.group_size
    while True:
        raw = session.rollouts()
        sampled.append(raw)
        keep = dynamic_sampling_filter(raw.rewards.float(), raw.correct, group_size, cfg, valid=raw.gradable)
        if not cfg.dynamic_sampling:
            keep = torch.ones_like(keep)
        every_rank = distributed.all_gather_shards(keep.tolist(), session.info)  # [N] in problem order
        chosen = distributed.shard(first_kept(every_rank, kept_groups, wanted), session.info)  # [N_rank]
        if any(chosen):
            penalty = overlong_penalty(raw.lengths, cfg, rollout.max_new_tokens)  # [B]
            shaped = dataclasses.replace(raw, rewards=raw.rewards.float() + penalty)
            kept.append(shaped.select_groups(torch.tensor(chosen, device=keep.device)))
        kept_groups += sum(every_rank)
        if kept_groups >= wanted or extra_rounds >= cfg.max_extra_rounds:
            break
        extra_rounds += 1
    metrics = session.rollout_metrics(*sampled)
    metrics.update(
        {
            "dapo/kept_groups": float(min(kept_groups, wanted)),
            "dapo/dropped_groups": float(len(sampled) * wanted - kept_groups),
            "dapo/extra_rounds": float(extra_rounds),
            "dapo/partial_batch": float(kept_groups < wanted),
        }
    )
    if kept_groups == 0:
        return None, metrics
    if not kept:  # other ranks hold the batch: this one joins the update with no rows
        return raw.select_groups(torch.zeros_like(keep)), metrics
    return (RolloutBatch.concat(kept) if len(kept) > 1 else kept[0]), metrics


def dapo_update(
    session: RLSession, batch: RolloutBatch | None, cfg: DAPOConfig, group_size: int, loss: Any
) -> dict[str, float]:
    """One step's update on its kept groups (none: the step is skipped): the loss mask, advantages, then ``mu``
    optimizer steps (with the off-policy correction of rows another engine sampled); the step's metrics."""
    if batch is None:
        return {"train/skipped_empty": 1.0}
    mask = batch.graded_mask  # [B, T] ungradable samples are out of the advantages and the loss
    if cfg.overlong_filtering:
        mask = overlong_filter(mask, batch.truncated)  # [B, T]
    adv = batch_advantages(batch.rewards, group_size, cfg, session.info, batch.gradable)
    metrics = session.update(batch, adv, loss, mu=cfg.mu, mask=mask, correction=cfg.importance_sampling)
    return {"train/skipped_empty": 0.0, **metrics}


def train_dapo(
    cfg: DAPOConfig,
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
    """Train ``model`` with DAPO on an environment for ``run.max_steps`` batches, resuming when possible.

    A batch whose extra rounds ran out trains on the groups it has (``dapo/partial_batch`` = 1); a batch
    with no informative group at all skips the update (``train/skipped_empty`` = 1). Neither raises.

    Args:
        cfg: DAPO's own hyperparameters.
        model, tokenizer, env_id, run, rollout, run_dir, generator, eval_fn, hooks: As
            `reasongym.agents.grpo.train_grpo` takes them.

    Returns:
        An ``RLResult`` with one metrics dict per step.
    """
    default = shared_configs("default", "dapo")
    run, rollout = run or default["run"], rollout or default["rollout"]
    overlong_buffer_tokens(cfg, rollout.max_new_tokens)  # refuse a buffer that does not fit, before any work
    record = {"algo": "dapo", "run": run, "rollout": rollout, "dapo": cfg}
    session = start_session(
        run,
        rollout,
        model,
        tokenizer,
        env_id,
        algo="dapo",
        config_record=record,
        run_dir=run_dir,
        generator=generator,
        with_reference=False,
        eval_fn=eval_fn,
        hooks=hooks,
        old_logp_in_update=cfg.mu == 1,
    )
    loss = functools.partial(dapo_loss, cfg=cfg)

    def one_step() -> tuple[Any, dict[str, float]]:
        batch, metrics = sample_training_batch(session, cfg, rollout)
        return batch, {**metrics, **dapo_update(session, batch, cfg, rollout.group_size, loss)}

    return run_steps(session, one_step)
