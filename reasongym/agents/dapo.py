"""DAPO: decoupled clip and dynamic sampling policy optimisation (Yu et al., 2025, arXiv:2503.14476).

Read top to bottom: config, the reward and batch helpers, the loss, the loop. DAPO is GRPO without the
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from reasongym.agents import rl_setup
from reasongym.agents.advantages import group_advantages, zero_variance_groups
from reasongym.agents.common import masked_sum
from reasongym.agents.runtime import session as rl_loop
from reasongym.agents.runtime.session import RLResult
from reasongym.errors import ConfigError


@dataclass(frozen=True)
class DAPOConfig:
    """Hyperparameters of ``train_dapo``. Defaults follow the DAPO paper (Sec. 4.1) unless a comment says otherwise."""

    max_steps: int = 200
    """Training batches (each gives ``mu`` optimizer steps); a resumed run counts earlier ones."""
    num_prompts: int = 16
    """Groups per training batch after filtering (the paper uses 512 prompts; ours is a CPU default)."""
    group_size: int = 16
    """G, completions sampled per prompt (paper Sec. 4.1: 16 responses per prompt)."""
    max_new_tokens: int = 20480
    """L_max, the longest completion in tokens (paper Sec. 4.1: 16,384 + 4,096 soft-punish buffer)."""
    overlong_buffer: int | None = None
    """L_cache, the tokens before ``max_new_tokens`` over which the penalty grows; 0: off; None:
    ``min(4096, max_new_tokens // 5)`` (see ``overlong_buffer_tokens``)."""
    overlong_penalty: float = 1.0
    """Penalty at ``max_new_tokens`` (paper Eq. 13 reaches -1 at L_max)."""
    overlong_filtering: bool = False
    """Mask truncated completions out of the loss (paper Sec. 3.4 overlong filtering; off in its final recipe,
    which uses the soft punishment instead)."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts (paper Sec. 4.1: 1.0)."""
    lr: float = 1e-6
    """AdamW learning rate, constant (paper Sec. 4.1: 1e-6 after a 20-step warmup; no warmup here)."""
    eps_low: float = 0.2
    """Lower clip: the ratio of a negative-advantage token is clipped below ``1 - eps_low`` (paper: 0.2)."""
    eps_high: float = 0.28
    """Upper clip: the ratio of a positive-advantage token is clipped above ``1 + eps_high`` (paper: 0.28)."""
    mu: int = 1
    """Optimizer steps per batch, each over all of it (the paper takes 16 mini-batch steps per rollout batch)."""
    dynamic_sampling: bool = True
    """Drop zero-variance groups and sample again until ``num_prompts`` groups are kept (paper Sec. 3.2)."""
    zero_variance_tolerance: float = 1e-6
    """Groups whose rewards span no more than this count as zero variance (so continuous rewards work)."""
    accuracy_band: tuple[float, float] | None = None
    """Also keep only groups whose accuracy lies in [lo, hi]; None: no band (the paper's rule is 0 < acc < 1)."""
    max_extra_rounds: int = 4
    """Most extra generation rounds per batch; then the partial batch trains and the shortfall is logged."""
    micro_batch_size: int | None = None
    """Sequences per forward/backward pass (gradient accumulation); None: the whole batch at once."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this (paper recipe on verl: 1.0); None does not clip."""
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
    """Seeds the global RNGs, the order of training problems and the sampler of every round."""
    progress_bar: bool = True
    """Show a tqdm bar with live reward, accuracy and tokens/s."""
    tensorboard: bool | None = False
    """Mirror metrics to TensorBoard; None: when it is installed."""

    def __post_init__(self) -> None:
        rl_setup.check_common_fields(self)
        if not (0 < self.eps_low < 1 and self.eps_high > 0):
            raise ConfigError(
                f"eps_low={self.eps_low!r}, eps_high={self.eps_high!r} are not allowed; expected "
                "0 < eps_low < 1 and eps_high > 0"
            )
        if self.overlong_buffer is not None and not 0 <= self.overlong_buffer < self.max_new_tokens:
            raise ConfigError(
                f"overlong_buffer={self.overlong_buffer} is not allowed; expected 0 <= overlong_buffer < "
                f"max_new_tokens={self.max_new_tokens}, or None for min(4096, max_new_tokens // 5)"
            )
        if self.overlong_penalty < 0 or self.zero_variance_tolerance < 0 or self.max_extra_rounds < 0:
            raise ConfigError(
                "overlong_penalty, zero_variance_tolerance and max_extra_rounds must be >= 0; got "
                f"{self.overlong_penalty!r}, {self.zero_variance_tolerance!r}, {self.max_extra_rounds!r}"
            )
        band = self.accuracy_band
        if band is not None and not (len(band) == 2 and 0.0 <= band[0] <= band[1] <= 1.0):
            raise ConfigError(
                f"accuracy_band={band!r} is not allowed; expected (lo, hi) with 0 <= lo <= hi <= 1"
            )

    @property
    def overlong_buffer_tokens(self) -> int:
        """L_cache in tokens: ``overlong_buffer``, or when None ``min(4096, max_new_tokens // 5)``."""
        if self.overlong_buffer is not None:
            return self.overlong_buffer
        # The paper pairs a 4,096-token buffer with L_max = 20,480 (Sec. 4.1), a fifth of it; shorter
        # limits keep that fraction, so the default fits any max_new_tokens.
        return min(4096, self.max_new_tokens // 5)


# ------------------------------------------------------------------------------ reward shaping and filters


def overlong_penalty(lengths: Tensor, cfg: DAPOConfig) -> Tensor:
    """Soft overlong punishment per sequence (DAPO Eq. 13), to add to the reward: 0 or negative, [B].

    0 up to ``L_max - L_cache`` tokens, then falling linearly to ``-overlong_penalty`` at ``L_max``
    (``max_new_tokens``), and ``-overlong_penalty`` beyond. A buffer of 0 turns it off.
    """
    buffer = cfg.overlong_buffer_tokens
    if buffer == 0:
        return torch.zeros(lengths.shape, dtype=torch.float32, device=lengths.device)  # [B]
    safe = cfg.max_new_tokens - buffer
    excess = (lengths.float() - safe).clamp(min=0.0, max=float(buffer))  # [B]
    return -cfg.overlong_penalty * excess / buffer  # [B]


def dynamic_sampling_filter(rewards: Tensor, correct: Tensor, group_size: int, cfg: DAPOConfig) -> Tensor:
    """Which groups to keep: task rewards not all equal (within the tolerance) and accuracy inside the band.

    With 0/1 rewards this is DAPO Eq. 11, ``0 < #correct < G``. Pass the task rewards BEFORE the overlong
    penalty: a group that is all wrong (or all right) carries no signal about correctness, and length
    shaping alone would otherwise keep it.

    Args:
        rewards: [B] task rewards, without length shaping, in group layout.
        correct: [B] bool, whether each completion was correct.
        group_size: G.
        cfg: Supplies ``zero_variance_tolerance`` and ``accuracy_band``.

    Returns:
        [N] bool, True for the groups to train on.
    """
    keep = ~zero_variance_groups(rewards, group_size, cfg.zero_variance_tolerance)  # [N]
    if cfg.accuracy_band is not None:
        accuracy = correct.float().view(-1, group_size).mean(dim=1)  # [N]
        lo, hi = cfg.accuracy_band
        keep &= (accuracy >= lo) & (accuracy <= hi)  # [N]
    return keep


def overlong_filter(mask: Tensor, truncated: Tensor) -> Tensor:
    """``mask`` with the rows of truncated completions zeroed (overlong filtering, DAPO Sec. 3.4): [B, T]."""
    return mask * (~truncated.bool()).to(mask.dtype)[:, None]  # [B, T]


# ------------------------------------------------------------------------------ loss


def dapo_loss(
    logp: Tensor,
    old_logp: Tensor,
    adv: Tensor,
    mask: Tensor,
    cfg: DAPOConfig,
    *,
    batch_tokens: float | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """DAPO's token-level clip-higher surrogate, to minimise (DAPO Eq. 8; no KL term).

    ``loss = sum_{i,t} -min(r A, clip(r, 1 - eps_low, 1 + eps_high) A) / sum_i |o_i|`` with
    ``r = exp(logp - old_logp)``, the sum running over the masked tokens of the whole batch.

    Args:
        logp: [B, T] log-probs of the completion tokens under the policy being trained (with grad).
        old_logp: [B, T] log-probs under the policy that sampled them.
        adv: [B] one advantage per sequence.
        mask: [B, T] 1 on the tokens that carry loss (truncated rows zeroed under overlong filtering).
        cfg: Supplies ``eps_low`` and ``eps_high``.
        batch_tokens: Loss tokens of the whole batch when this is one micro-batch; None: this mask's sum.

    Returns:
        ``(loss, metrics)`` with ``loss/policy``, ``train/clip_low_frac``, ``train/clip_high_frac``,
        ``train/ratio_mean|min|max``, ``train/approx_kl_old`` and ``train/tokens`` over this call's tokens.
    """
    rl_loop.check_loss_shapes(logp, old_logp, None, adv, mask)
    mask = mask.to(logp.dtype)  # [B, T]
    tokens = batch_tokens if batch_tokens is not None else float(mask.sum())
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    ratio = torch.exp(logp - old_logp)  # [B, T]
    clipped_ratio = ratio.clamp(1 - cfg.eps_low, 1 + cfg.eps_high)  # [B, T]
    surrogate = torch.min(ratio * adv, clipped_ratio * adv)  # [B, T]
    loss = masked_sum(-surrogate, mask) / max(tokens, 1.0)  # []
    metrics = rl_loop.ratio_metrics(ratio, logp, old_logp, adv, mask, 1 - cfg.eps_low, 1 + cfg.eps_high)
    metrics["loss/policy"] = float(loss.detach())
    return loss, metrics


# ------------------------------------------------------------------------------ loop


def sample_training_batch(session: rl_loop.RLSession, cfg: DAPOConfig) -> tuple[Any | None, dict[str, float]]:
    """Sample rounds until ``num_prompts`` informative groups are kept or ``max_extra_rounds`` ran out.

    Groups are filtered on their task rewards; the overlong penalty then shapes the kept groups' rewards.

    Returns:
        ``(batch, metrics)``: the kept groups (rewards shaped by the overlong penalty), cut to
        ``num_prompts`` groups, or None when no group was kept; rollout metrics cover every sampled group.
    """
    from reasongym.agents.runtime.rollout import RolloutBatch

    sampled, kept, kept_groups, extra_rounds = [], [], 0, 0
    while True:
        raw = session.rollouts(cfg.num_prompts)
        sampled.append(raw)
        keep = dynamic_sampling_filter(raw.rewards.float(), raw.correct, cfg.group_size, cfg)  # [N]
        shaped = dataclasses.replace(raw, rewards=raw.rewards.float() + overlong_penalty(raw.lengths, cfg))
        if not cfg.dynamic_sampling:
            keep = torch.ones_like(keep)
        if keep.any():
            kept.append(shaped.select_groups(keep))
            kept_groups += int(keep.sum())
        if kept_groups >= cfg.num_prompts or extra_rounds >= cfg.max_extra_rounds:
            break
        extra_rounds += 1
    metrics = dict(RolloutBatch.concat(sampled).metrics()) if len(sampled) > 1 else dict(sampled[0].metrics())
    total_groups = len(sampled) * cfg.num_prompts
    metrics.update({
        "dapo/kept_groups": float(min(kept_groups, cfg.num_prompts)),
        "dapo/dropped_groups": float(total_groups - kept_groups),
        "dapo/extra_rounds": float(extra_rounds),
        "dapo/partial_batch": float(kept_groups < cfg.num_prompts),
    })  # fmt: skip
    if not kept:
        return None, metrics
    batch = RolloutBatch.concat(kept) if len(kept) > 1 else kept[0]
    if kept_groups > cfg.num_prompts:
        batch = batch.select_groups(torch.arange(kept_groups) < cfg.num_prompts)
    return batch, metrics


def train_dapo(
    cfg: DAPOConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    run_dir: str | Path | None = None,
    generator: Any | None = None,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
) -> RLResult:
    """Train ``model`` with DAPO on an environment for ``cfg.max_steps`` batches, resuming when possible.

    A batch whose extra rounds ran out trains on the groups it has (``dapo/partial_batch`` = 1); a batch
    with no informative group at all skips the update (``train/skipped_empty`` = 1). Neither raises.

    Args:
        cfg: Hyperparameters.
        model: A causal LM (trained in place, on its device).
        tokenizer: Its tokenizer.
        env_id: A registered environment id, or a built environment.
        run_dir: Folder for config, metrics, samples, checkpoints and the plot; a folder holding a
            checkpoint is resumed. None: nothing written, no resume.
        generator: The sampler; None builds an ``HFGenerator`` on ``model``.
        eval_fn: Extra evaluation called with the model whenever the built-in one runs.

    Returns:
        An ``RLResult`` with one metrics dict per step.
    """
    session = rl_loop.RLSession.start(
        cfg, model, tokenizer, env_id, algo="dapo", run_dir=run_dir, generator=generator,
        with_reference=False, eval_fn=eval_fn,
    )  # fmt: skip
    try:
        for step in session.remaining_steps():
            batch, metrics = sample_training_batch(session, cfg)
            metrics["train/skipped_empty"] = float(batch is None)
            if batch is not None:
                mask = batch.completion_mask  # [B, T]
                if cfg.overlong_filtering:
                    mask = overlong_filter(mask, batch.truncated)  # [B, T]
                adv = group_advantages(batch.rewards, cfg.group_size, "group_std")  # [B]

                def loss_fn(logp, old_logp, ref, adv, mask, *, batch_tokens, **_):  # noqa: ANN001, ANN003
                    return dapo_loss(logp, old_logp, adv, mask, cfg, batch_tokens=batch_tokens)

                metrics.update(session.update(batch, adv, loss_fn, mask=mask))
            session.finish_step(step, metrics, batch)
    finally:
        session.close()
    return session.result()
