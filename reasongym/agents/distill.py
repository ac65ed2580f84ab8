"""On-policy distillation: the student samples, a teacher scores every sampled position, the student moves
toward the teacher there (Agarwal et al., 2024, GKD, arXiv:2306.13649; Lu et al., 2025, "On-Policy
Distillation", Thinking Machines).

Read top to bottom: the built-in divergences (registered by name in the open registry
`reasongym.agents.registries.DIVERGENCES`), the loss, one micro-batch's forward and backward, the loop;
the teacher is `reasongym.agents.teacher`'s. The config, `DistillConfig`, lives in `reasongym.agents.algorithm_configs` (torch-free); the
shared settings are `RunConfig` and `RolloutConfig`, and the sampling, the run folder, checkpoints, resume
and evaluation are the GRPO family's `RLSession`. A verifier gives one bit per completion; a teacher gives a
signal at every token of the student's own samples, where SFT imitates the teacher's samples instead.

The divergence at a position ``t`` of a student sample compares the student's and the teacher's next-token
distributions given the same prefix (the student's). ``reverse_kl``, ``forward_kl`` and ``jsd`` are exact
sums over the vocabulary, as in GKD: the gradient flows through the student's whole distribution at each
position, not through the choice of the prefix (GKD does not differentiate through sampling either).
``sampled_reverse_kl`` needs only the teacher's log-prob of the token sampled: its per-token estimate
``log p_s(x_t) - log p_t(x_t)`` of the reverse KL is a reward, and the loss is its policy gradient at that
token (the discount-0 form of Thinking Machines' recipe), for a teacher that returns log-probs of given
tokens only. With ``reward_weight`` the verifier adds GRPO's group-relative policy gradient.

Every term is a token mean over the WHOLE batch's loss tokens (`BatchTotals`), so micro-batches with gradient
accumulation and several processes give the full batch's gradient. There is one update per batch (no
``mu``): the samples are the current policy's, so no importance ratio is needed, and the teacher runs
once per batch. Shapes use the legend of `reasongym.agents.common` (B sequences, T completion tokens, V
the vocabulary).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.advantages import group_advantages
from reasongym.agents.algorithm_configs import DistillConfig
from reasongym.agents.common import masked_sum
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.presets import shared_configs
from reasongym.agents.registries import DIVERGENCES
from reasongym.agents.runtime.hooks import StepHook
from reasongym.agents.runtime.loop import run_steps
from reasongym.agents.runtime.session import EvalFn, RLResult, RLSession
from reasongym.agents.runtime.setup import start_session
from reasongym.agents.runtime.update import BatchTotals, LossInputs
from reasongym.agents.teacher import (
    ServedTeacher,
    Teacher,
    as_teacher,
    check_same_tokenizer,
    completion_log_probs,
)
from reasongym.errors import ConfigError, TrainingFailed

# ------------------------------------------------------------------------------ named choices: divergence


class Divergence(NamedTuple):
    """One divergence at each position: what to minimise, and its value (a metric)."""

    loss: Tensor
    """[b, T] the per-token term whose gradient moves the student (with grad)."""
    value: Tensor
    """[b, T] the divergence itself, or its estimate (no grad)."""


def reverse_kl(student: Tensor, teacher: Tensor, tokens: Tensor, beta: float) -> Divergence:
    """KL(student || teacher) = sum_v p_s(v) (log p_s(v) - log p_t(v)) at each position: [b, T]."""
    kl = (student.exp() * (student - teacher)).sum(dim=-1)  # [b, T]
    return Divergence(kl, kl.detach())


def forward_kl(student: Tensor, teacher: Tensor, tokens: Tensor, beta: float) -> Divergence:
    """KL(teacher || student) = sum_v p_t(v) (log p_t(v) - log p_s(v)) at each position: [b, T]."""
    kl = (teacher.exp() * (teacher - student)).sum(dim=-1)  # [b, T]
    return Divergence(kl, kl.detach())


def generalized_jsd(student: Tensor, teacher: Tensor, tokens: Tensor, beta: float) -> Divergence:
    """GKD's generalized JSD: ``beta KL(teacher || m) + (1 - beta) KL(student || m)``, with the mixture
    ``m = beta p_t + (1 - beta) p_s`` (GKD Eq. 1, TRL's ``generalized_jsd_loss``): [b, T]."""
    mixture = torch.logsumexp(
        torch.stack([teacher + math.log(beta), student + math.log(1 - beta)]), dim=0
    )  # [b, T, V]
    to_teacher = (teacher.exp() * (teacher - mixture)).sum(dim=-1)  # [b, T]
    to_student = (student.exp() * (student - mixture)).sum(dim=-1)  # [b, T]
    jsd = beta * to_teacher + (1 - beta) * to_student  # [b, T]
    return Divergence(jsd, jsd.detach())


def sampled_reverse_kl(student: Tensor, teacher: Tensor, tokens: Tensor, beta: float) -> Divergence:
    """The reverse KL from the sampled token alone: ``teacher`` is [b, T], the teacher's log-prob of each
    sampled token. The estimate ``k = log p_s(x_t) - log p_t(x_t)`` is a per-token cost, and the loss is its
    policy gradient ``k * log p_s(x_t)`` (``k`` held fixed): its expectation over the student's samples has
    the gradient of the reverse KL at that position."""
    logp = student.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)  # [b, T]
    estimate = (logp - teacher).detach()  # [b, T]
    return Divergence(estimate * logp, estimate)


# ------------------------------------------------------------------------------ loss


def distill_loss(
    student: Tensor,
    teacher: Tensor,
    tokens: Tensor,
    adv: Tensor,
    mask: Tensor,
    totals: BatchTotals,
    *,
    cfg: DistillConfig,
) -> tuple[Tensor, dict[str, float]]:
    """The divergence to the teacher at every loss token, plus ``reward_weight`` times the verifier's
    policy gradient, averaged over the whole batch's loss tokens; to minimise.

    ``loss = sum_{b,t} mask * (D_t + w * (-A_b log p_s(x_t))) / totals.tokens``, where ``D_t`` is
    ``cfg.divergence`` (the registry `DIVERGENCES`) and ``A_b`` the sequence's group-relative advantage.

    Args:
        student: [b, T, V] the student's log-probs at each completion position (with grad).
        teacher: [b, T, V] the teacher's log-probs there, or [b, T] of the sampled tokens only for
            ``sampled_reverse_kl`` (no grad either way).
        tokens: [b, T] the sampled completion tokens.
        adv: [b] each sequence's advantage from the verifier (zeros when ``reward_weight`` is 0).
        mask: [b, T] 1 on the tokens that carry loss.
        totals: The whole batch's counts (this may be one micro-batch of it).
        cfg: Supplies ``divergence``, ``jsd_beta`` and ``reward_weight``.

    Returns:
        ``(loss, metrics)``: ``loss/policy`` (this micro-batch's share of the loss), ``distill/divergence``
        (the mean divergence per loss token), ``loss/reward`` (the verifier's term before its weight),
        ``train/tokens``.
    """
    divergence_of = DIVERGENCES[cfg.divergence]
    mask = mask.to(student.dtype)  # [b, T]
    divergence = divergence_of(student, teacher, tokens, cfg.jsd_beta)  # [b, T] each
    logp = student.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)  # [b, T]
    reward_term = -adv.to(student.dtype)[:, None] * logp  # [b, T]
    per_token = divergence.loss + cfg.reward_weight * reward_term  # [b, T]
    loss = masked_sum(per_token, mask) / max(totals.tokens, 1.0)  # []
    tokens_here = float(mask.sum())
    metrics = {
        "loss/policy": float(loss.detach()),
        "distill/divergence": float(masked_sum(divergence.value, mask)) / max(tokens_here, 1.0),
        "loss/reward": float(masked_sum(reward_term.detach(), mask)) / max(tokens_here, 1.0),
        "train/tokens": tokens_here,
    }
    return loss, metrics


# ------------------------------------------------------------------------------ one micro-batch


def distill_backward_part(
    model: torch.nn.Module,
    inputs: LossInputs,
    part: slice,
    with_entropy: bool,
    *,
    teacher: Teacher | ServedTeacher,
    divergence: str,
) -> tuple[dict[str, float], float]:
    """Forward rows ``part`` through the student (and the teacher, unless its log-probs of the sampled tokens
    came with ``inputs.ref_logp``), backpropagate `distill_loss`; its metrics and summed token entropy."""
    batch, start = inputs.batch, inputs.batch.completion_start
    input_ids, attention_mask = batch.input_ids[part], batch.attention_mask[part]
    # Compared with a local teacher id by id: over the vocabulary the two models share.
    shared = teacher.vocab_size if isinstance(teacher, Teacher) else None
    student = completion_log_probs(model, input_ids, attention_mask, start, inputs.temperature, shared)
    token_level = DIVERGENCES.has(divergence, "token_level")
    if not token_level and isinstance(teacher, Teacher):
        teacher_logp = teacher.full(input_ids, attention_mask, start, inputs.temperature)  # [b, T, V]
    elif token_level and inputs.ref_logp is not None:
        teacher_logp = inputs.ref_logp[part]  # [b, T]
    else:
        raise ConfigError(
            f"divergence={divergence!r} cannot use this {type(teacher).__name__}: the sampled-token divergence "
            "needs the teacher's log-probs of the sampled tokens, the others a teacher whose weights are here"
        )
    mask = inputs.mask[part]  # [b, T]
    loss: Any = inputs.loss  # `distill_loss` with its config: not the policy losses' signature
    value, metrics = loss(
        student,
        teacher_logp,
        tokens=input_ids[:, start:],
        adv=inputs.adv[part],
        mask=mask,
        totals=inputs.totals,
    )
    inputs.backward(value)
    metrics["loss/total"] = float(value.detach())
    if not with_entropy:
        return metrics, 0.0
    entropy = -(student.detach().exp() * student.detach()).sum(dim=-1)  # [b, T]
    return metrics, float((entropy * mask).sum())


# ------------------------------------------------------------------------------ loop


def verifier_advantages(batch: Any, cfg: DistillConfig, group_size: int) -> Tensor:
    """[B] this rank's advantages from the verifier (GRPO's ``group_std`` over every rank's groups), or
    zeros when ``reward_weight`` is 0 or the groups have one sample."""
    if cfg.reward_weight == 0 or group_size < 2:
        return torch.zeros_like(batch.rewards)
    rewards = distributed.all_gather_groups(batch.rewards, group_size)  # [B_all]
    graded = distributed.all_gather_groups(batch.gradable, group_size)  # [B_all]
    adv = group_advantages(rewards, group_size, "group_std", valid=graded)  # [B_all]
    return distributed.shard_groups(adv, group_size)  # [B]


def distill_update(
    session: RLSession, batch: Any, teacher: Teacher | ServedTeacher, cfg: DistillConfig, group_size: int
) -> dict[str, float]:
    """One step's update on the student's samples: the teacher's scores (once per batch), the verifier's
    advantages, one optimizer step; the step's metrics, with the teacher's time and memory."""
    temperature = session.rollout_cfg.logprob_temperature
    sampled = None
    if DIVERGENCES.has(cfg.divergence, "token_level"):
        sampled = teacher.sampled(batch, session.run_cfg.micro_batch_size, temperature)  # [B, T]
    part = functools.partial(distill_backward_part, teacher=teacher, divergence=cfg.divergence)
    loss = functools.partial(distill_loss, cfg=cfg)
    adv = verifier_advantages(batch, cfg, group_size)  # [B]
    metrics = session.update(batch, adv, loss, mu=1, ref_logp=sampled, backward_part=part)
    cost = teacher.take_cost(batch.input_ids.device)
    if sampled is None:  # the teacher ran inside the update's passes: its time is its own phase
        session.phases["forward_backward"] -= cost["perf/teacher_s"]
    session.phases["teacher"] += cost["perf/teacher_s"]
    return {
        **metrics,
        "perf/teacher_memory_mb": cost["perf/teacher_memory_mb"],
        **session.rollout_metrics(batch),
    }


def check_teacher(cfg: DistillConfig, tokenizer: Any, teacher: Any, teacher_tokenizer: Any | None) -> None:
    """Raise ConfigError for a teacher the divergence cannot use: another tokenizer, or a served teacher
    (log-probs of given tokens only) with a divergence over the whole vocabulary."""
    if teacher_tokenizer is not None:
        check_same_tokenizer(tokenizer, teacher_tokenizer)
    if isinstance(teacher, ServedTeacher) and not DIVERGENCES.has(cfg.divergence, "token_level"):
        raise ConfigError(
            f"divergence={cfg.divergence!r} needs the teacher's whole next-token distribution, which a served "
            f"teacher does not give; use divergence='sampled_reverse_kl', or the teacher's weights here"
        )


def train_distill(
    cfg: DistillConfig,
    model: torch.nn.Module,
    tokenizer: Any,
    env_id: str | Any,
    *,
    teacher: torch.nn.Module | ServedTeacher,
    teacher_tokenizer: Any | None = None,
    run: RunConfig | None = None,
    rollout: RolloutConfig | None = None,
    run_dir: str | Path | None = None,
    generator: Any | None = None,
    eval_fn: EvalFn | None = None,
    hooks: Iterable[StepHook] = (),
) -> RLResult:
    """Distill ``teacher`` into ``model`` on its own samples of an environment's prompts, for ``run.max_steps``
    batches, resuming when possible.

    Args:
        cfg: The divergence and the verifier's weight.
        model: The student, a causal LM (trained in place, on its device); ``tokenizer``: its tokenizer.
        env_id: A registered environment id, or a built environment.
        teacher: The teacher, a causal LM (`reasongym.policy.loading.load_policy` loads one; moved to the
            student's device, frozen), or a `ServedTeacher` (``sampled_reverse_kl`` only).
            ``teacher_tokenizer``: checked against ``tokenizer``; None: the same.
        run, rollout, run_dir, generator, eval_fn, hooks: As `reasongym.agents.grpo.train_grpo` takes them
            (None: the ``default`` preset's configs; no run folder; the sampler ``rollout.engine`` names).

    Returns:
        An ``RLResult`` with one metrics dict per step.
    """
    check_teacher(cfg, tokenizer, teacher, teacher_tokenizer)
    default = shared_configs("default", "distill")
    run, rollout = run or default["run"], rollout or default["rollout"]
    record = {"algo": "distill", "run": run, "rollout": rollout, "distill": cfg}
    frozen = teacher if isinstance(teacher, ServedTeacher) else as_teacher(teacher, model, tokenizer)
    session = start_session(
        run,
        rollout,
        model,
        tokenizer,
        env_id,
        algo="distill",
        config_record=record,
        run_dir=run_dir,
        generator=generator,
        with_reference=False,
        eval_fn=eval_fn,
        groups=cfg.reward_weight > 0,
        hooks=hooks,
        old_logp_in_update=True,  # one update per batch, and no ratio: the loss never reads them
    )

    def one_step() -> tuple[Any, dict[str, float]]:
        batch = session.rollouts()
        return batch, distill_update(session, batch, frozen, cfg, rollout.group_size)

    return check_trained(run_steps(session, one_step), "distill")


def check_trained(result: RLResult, algo: str) -> RLResult:
    """``result``, unless every step the call trained was skipped (its loss or gradient non-finite: the weights
    never moved), which raises TrainingFailed: such a run must not look finished."""
    skipped = [row.get("train/skipped_nonfinite", 0.0) for row in result.history]
    if skipped and all(skipped):
        where = f"; see train/skipped_nonfinite in {result.run_dir}/metrics.jsonl" if result.run_dir else ""
        raise TrainingFailed(
            f"{algo}: every one of the {len(skipped)} steps this run trained was skipped: the loss or gradient was "
            f"not finite (NaN or infinite log-probs of the teacher or the student), so the weights never moved{where}"
        )
    return result
