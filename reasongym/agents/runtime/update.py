"""The update every trainer shares: the RL loss interface, micro-batches and their metrics, the optimizer.

An algorithm hands the loop one `PolicyLoss`: a function of per-token tensors and the `BatchTotals` of
the whole batch. Every micro-batch (and, under torch.distributed, every rank) is normalised by those
totals, never by its own counts, so the accumulated gradient equals the full-batch gradient whatever the
split (the bug class of trl#3021 and verl#3741). Shapes use the legend of `reasongym.agents.common`.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.algorithm_configs import ImportanceSamplingConfig
from reasongym.agents.common import masked_mean, token_logprobs
from reasongym.agents.offpolicy import importance_weights
from reasongym.agents.runtime import parallel
from reasongym.errors import ConfigError
from reasongym.rollouts.batch import RolloutBatch

_SUMMED_KEYS = ("loss/policy", "loss/total")


@dataclass(frozen=True)
class BatchTotals:
    """Normalisers of the whole batch, the same for every micro-batch and rank."""

    sequences: int
    """Sequences in the batch (B over all micro-batches and ranks)."""
    tokens: float
    """Loss tokens in the batch (the sum of the loss mask over all micro-batches and ranks)."""
    max_new_tokens: int
    """The rollout's length limit: Dr. GRPO's constant normaliser is ``sequences * max_new_tokens``."""


class PolicyLoss(Protocol):
    """What the loop calls on each micro-batch; the algorithm binds its config (``functools.partial``)."""

    def __call__(
        self,
        logp: Tensor,
        old_logp: Tensor,
        ref_logp: Tensor | None,
        adv: Tensor,
        mask: Tensor,
        totals: BatchTotals,
        weights: Tensor | None = None,
    ) -> tuple[Tensor, dict[str, float]]:
        """``(loss to minimise, metrics)`` of one micro-batch: [B, T] tensors, adv [B]; ``weights`` [B, T] the
        off-policy correction (`reasongym.agents.offpolicy`) that multiplies each token's policy loss, or None."""


@torch.no_grad()
def recompute_old_logp(
    model: torch.nn.Module, batch: RolloutBatch, micro_batch_size: int | None = None, temperature: float = 1.0
) -> RolloutBatch:
    """``batch`` with ``old_logp`` from one no-grad forward pass of ``model`` over its tokens (eval mode).

    The contract for generators that return text only (most served models): the policy that will be
    updated scores what was sampled, as TRL does, so the importance ratio starts at exactly 1. Using the
    placeholder zeros instead would make the ratio ``p / 1``: rows with a negative advantage would get no
    gradient and the rest would be scaled by ``p``. A sampler's own log-probs (another engine's: vLLM, a
    served model that reports them) are kept as ``sampler_logp``, for the off-policy correction.
    ``temperature`` divides the logits first: the loss's (`RolloutConfig.logprob_temperature`).
    """
    was_training = model.training
    model.eval()
    logp, _ = token_logprobs(
        model,
        batch.input_ids,
        batch.attention_mask,
        batch.completion_start,
        micro_batch_size=micro_batch_size,
        temperature=temperature,
    )  # [B, T]
    model.train(was_training)
    old_logp = (logp * batch.completion_mask).float()  # [B, T]
    sampler_logp = batch.old_logp if batch.old_logp_known else None  # [B, T] or None
    return dataclasses.replace(batch, old_logp=old_logp, old_logp_known=True, sampler_logp=sampler_logp)


def old_logp_from_update(batch: RolloutBatch) -> RolloutBatch:
    """``batch`` marked for the update's own forward pass to give its old log-probs (one update per batch:
    `policy_backward_part`), the sampler's log-probs, when it had them, kept as ``sampler_logp`` for the
    off-policy correction. What `recompute_old_logp` would compute, without a pass of its own."""
    sampler_logp = batch.old_logp if batch.old_logp_known else None  # [B, T] or None
    return dataclasses.replace(batch, old_logp_known=False, sampler_logp=sampler_logp)


def check_loss_shapes(
    logp: Tensor, old_logp: Tensor, ref_logp: Tensor | None, adv: Tensor, mask: Tensor
) -> None:
    """Raise ConfigError unless logp, old_logp, mask (and ref_logp) are [B, T] and adv is [B]."""
    shapes = {"logp": logp.shape, "old_logp": old_logp.shape, "mask": mask.shape}
    if ref_logp is not None:
        shapes["ref_logp"] = ref_logp.shape
    if logp.ndim != 2 or len(set(shapes.values())) != 1 or adv.shape != logp.shape[:1]:
        described = {name: tuple(shape) for name, shape in {**shapes, "adv": adv.shape}.items()}
        raise ConfigError(f"loss inputs disagree: {described}; expected [B, T] tensors and adv of shape [B]")


def totals_of(mask: Tensor, max_new_tokens: int) -> BatchTotals:
    """`BatchTotals` of a whole (single-process) batch from its [B, T] loss mask."""
    return BatchTotals(int(mask.shape[0]), float(mask.sum()), max_new_tokens)


def global_totals(mask: Tensor, max_new_tokens: int) -> BatchTotals:
    """`BatchTotals` of the batch over every rank: this rank's [B, T] loss mask, counts summed across ranks.

    Each rank then normalises its share by the whole batch, so N processes take exactly the step one
    process would take on all the data (one process: `totals_of`).
    """
    local = {"sequences": float(mask.shape[0]), "tokens": float(mask.sum())}
    summed = distributed.all_reduce_sum(local)
    return BatchTotals(round(summed["sequences"]), summed["tokens"], max_new_tokens)


@torch.no_grad()
def ratio_metrics(
    ratio: Tensor, logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, low: float, high: float
) -> dict[str, float]:
    """Clip fractions (low and high apart), importance-ratio stats and k3 KL(pi || pi_old), over masked tokens.

    A token is clipped low when ``A < 0`` and ``r < low`` and clipped high when ``A > 0`` and ``r > high``:
    exactly the tokens whose gradient the clipped objective zeroes.
    """
    adv = adv.expand_as(ratio)  # [B, T]
    return clip_metrics(ratio, logp, old_logp, mask, (ratio < low) & (adv < 0), (ratio > high) & (adv > 0))


@torch.no_grad()
def clip_metrics(
    ratio: Tensor, logp: Tensor, old_logp: Tensor, mask: Tensor, clipped_low: Tensor, clipped_high: Tensor
) -> dict[str, float]:
    """`ratio_metrics` for a loss that says itself which tokens its clip changed (``clipped_*``: [B, T] bool).

    ``ratio`` [B, T] is the ratio the loss weighs (a sequence's repeated on its tokens for GSPO), so
    ``ratio_mean`` is token-weighted; ``approx_kl_old`` is always the token-level k3 of logp to old_logp.
    """
    log_ratio = old_logp - logp  # [B, T]
    live = mask != 0  # [B, T]
    any_live = bool(live.any())
    return {
        "train/clip_low_frac": float(masked_mean(clipped_low.to(mask.dtype), mask)),
        "train/clip_high_frac": float(masked_mean(clipped_high.to(mask.dtype), mask)),
        "train/ratio_mean": float(masked_mean(ratio, mask)),
        "train/ratio_max": float(ratio[live].max()) if any_live else 1.0,
        "train/ratio_min": float(ratio[live].min()) if any_live else 1.0,
        "train/approx_kl_old": float(masked_mean(torch.exp(log_ratio) - log_ratio - 1, mask)),
        "train/tokens": float(mask.sum()),
    }


def accumulate_gradients(
    model: torch.nn.Module,
    batch: Any,
    adv: Tensor,
    loss: PolicyLoss,
    totals: BatchTotals,
    *,
    mask: Tensor,
    ref_logp: Tensor | None = None,
    correction: ImportanceSamplingConfig | None = None,
    micro_batch_size: int | None = None,
    with_entropy: bool = False,
    temperature: float = 1.0,
    world_size: int = 1,
    scaler: Any = None,
    after_pass: Callable[[], Any] | None = None,
    backward_part: BackwardPart | None = None,
) -> dict[str, float]:
    """Backpropagate ``loss`` over ``batch`` in micro-batches, the gradients adding up to the full batch's;
    returns this rank's loss metrics: losses summed over micro-batches, the rest token-weighted.

    Under DDP or FSDP (``world_size`` > 1) the ranks' gradients are averaged once, on each rank's last
    micro-batch. Every rank normalises by the whole batch's ``totals``, so the batch gradient is the SUM
    of the ranks': each loss is scaled by ``world_size`` before the average. A rank without rows (or,
    under FSDP, with fewer micro-batches) still joins every collective, with a zero gradient.

    Args:
        model: The policy, or its DDP wrapper; gradients accumulate in its ``.grad``.
        batch: The rollouts (a ``RolloutBatch``); ``adv`` [B] their advantages; ``loss`` the algorithm's
            `PolicyLoss`; ``totals`` the whole batch's normalisers (every rank's).
        mask: [B, T] loss mask; ``ref_logp``: [B, T] reference log-probs handed to the loss, or None.
        correction: The off-policy correction of a batch with ``sampler_logp`` (`reasongym.agents.offpolicy`),
            or None.
        micro_batch_size: Rows per forward/backward (None: all at once); ``with_entropy``: also return
            ``train/entropy``, the mean token entropy over ``mask``; ``temperature``: the logits' divisor.
        world_size: Processes whose gradients are averaged (1: none); ``scaler``: fp16 autocast's
            ``torch.amp.GradScaler``, or None; ``after_pass``: called after each micro-batch's backward.
        backward_part: One micro-batch's forward, loss and backward; None: `policy_backward_part`.
    """
    inputs = LossInputs(batch, adv, loss, totals, mask, ref_logp, correction, temperature, world_size, scaler)
    part = backward_part or policy_backward_part
    sums, entropy_sum = _passes(model, inputs, part, micro_batch_size, with_entropy, after_pass)
    result = _finish(sums)
    result["train/tokens"] = float(mask.sum())  # also on a rank without rows: its weight in the merge is 0
    if with_entropy:
        result["train/entropy"] = entropy_sum / max(float(mask.sum()), 1.0)
    return result


def _passes(
    model: torch.nn.Module,
    inputs: LossInputs,
    part: BackwardPart,
    micro_batch_size: int | None,
    with_entropy: bool,
    after_pass: Callable[[], Any] | None,
) -> tuple[dict[str, float], float]:
    """Each micro-batch's forward and backward, the ranks' gradients averaged on the last one; their metrics
    folded together (`_accumulate`) and their token entropy summed. A rank with fewer micro-batches than
    another (FSDP), or none, runs zero-gradient passes so that it joins every collective."""
    rows = inputs.batch.input_ids.shape[0]
    size = micro_batch_size or max(rows, 1)
    sums: dict[str, float] = defaultdict(float)
    entropy_sum, count = 0.0, -(-rows // size)
    passes = max(parallel.passes_everywhere(count, model), 1 if inputs.world_size > 1 else 0)
    for index in range(passes):
        with parallel.gradient_sync(model, enabled=index == passes - 1):
            if index >= count:  # no rows left here; other ranks still have some
                _backward_nothing(model)
                continue
            metrics, entropy = part(model, inputs, slice(index * size, (index + 1) * size), with_entropy)
        _accumulate(sums, metrics)
        entropy_sum += entropy
        if after_pass is not None:  # this micro-batch's graph is gone: its activations can go back
            after_pass()
    return sums, entropy_sum


@dataclass(frozen=True)
class LossInputs:
    """What each micro-batch's loss reads of the whole batch (its rows sliced), and how its backward runs."""

    batch: Any
    adv: Tensor
    loss: PolicyLoss
    totals: BatchTotals
    mask: Tensor
    ref_logp: Tensor | None
    correction: ImportanceSamplingConfig | None
    """The off-policy correction, applied where the batch has ``sampler_logp``; None: none."""
    temperature: float
    world_size: int
    scaler: Any

    def backward(self, value: Tensor) -> None:
        """Backpropagate one micro-batch's loss: scaled by the world size under DDP (the ranks' gradients are
        averaged, and the batch's is their sum) and by fp16's gradient scaler."""
        scaled = value * self.world_size if self.world_size > 1 else value
        (self.scaler.scale(scaled) if self.scaler is not None else scaled).backward()


class BackwardPart(Protocol):
    """One micro-batch's forward, loss and backward: ``(loss metrics, summed token entropy)`` of rows ``part``."""

    def __call__(
        self, model: torch.nn.Module, inputs: LossInputs, part: slice, with_entropy: bool
    ) -> tuple[dict[str, float], float]:
        """Forward rows ``part`` of ``inputs.batch``, backpropagate their loss (through `LossInputs.backward`),
        and return its metrics and the entropy summed over its loss tokens."""


def policy_backward_part(
    model: torch.nn.Module, inputs: LossInputs, part: slice, with_entropy: bool
) -> tuple[dict[str, float], float]:
    """Forward and backward one micro-batch (rows ``part``); its loss metrics and summed token entropy. The
    logits are divided by ``inputs.temperature`` before the log-probs and entropy.

    A batch whose ``old_logp`` is not known yet (``old_logp_known`` False: drawn by another engine, or
    ahead, and trained on by one update) takes this forward pass's own log-probs, detached, as the old
    policy's: the weights that score it are the ones the update starts from, as TRL does at
    ``num_iterations=1``, and no separate scoring pass is needed."""
    batch, mask = inputs.batch, inputs.mask[part]  # [b, T]
    logp, entropy = token_logprobs(
        model,
        batch.input_ids[part],
        batch.attention_mask[part],
        batch.completion_start,
        with_entropy=with_entropy,
        temperature=inputs.temperature,
    )  # [b, T]
    if getattr(batch, "old_logp_known", True):
        old_logp = batch.old_logp[part]  # [b, T]
    else:  # one update per batch: the weights it starts from are the old policy's
        old_logp = (logp.detach() * batch.completion_mask[part]).float()  # [b, T]
    weights, corrected = correction_of(inputs, part, old_logp, mask)  # [b, T] or None
    # A loss without an off-policy correction takes no ``weights`` argument.
    kwargs = {} if weights is None else {"weights": weights}
    value, metrics = inputs.loss(
        logp=logp,
        old_logp=old_logp,
        ref_logp=None if inputs.ref_logp is None else inputs.ref_logp[part],
        adv=inputs.adv[part],
        mask=mask,
        totals=inputs.totals,
        **kwargs,
    )
    inputs.backward(value)
    metrics["loss/total"] = float(value.detach())
    return {**metrics, **corrected}, float((entropy * mask).sum()) if entropy is not None else 0.0


def correction_of(
    inputs: LossInputs, part: slice, old_logp: Tensor, mask: Tensor
) -> tuple[Tensor | None, dict[str, float]]:
    """The off-policy correction of rows ``part``: ([b, T] weights, their ``sampler/`` metrics), or
    ``(None, {})`` where the batch has no ``sampler_logp`` (the trained module sampled it itself)."""
    sampler_logp = getattr(inputs.batch, "sampler_logp", None)
    if inputs.correction is None or sampler_logp is None:
        return None, {}
    weights, metrics = importance_weights(old_logp.detach(), sampler_logp[part], mask, inputs.correction)
    del metrics["sampler/tokens"]  # weighed by the loss's own ``train/tokens``: the same mask
    return weights, metrics


def _backward_nothing(model: torch.nn.Module) -> None:
    """A zero gradient through the whole model: a rank without rows joins the ranks' collectives with it."""
    device = next(model.parameters()).device
    logits = model(input_ids=torch.zeros((1, 1), dtype=torch.long, device=device), use_cache=False).logits
    (logits.sum() * 0.0).backward()


def merge_rank_metrics(per_rank: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """One rank's view of `accumulate_gradients`'s metrics from every rank's: losses summed (each is already
    a share of the whole batch's loss), means weighted by each rank's ``train/tokens``, extremes as such."""
    sums: dict[str, float] = defaultdict(float)
    for metrics in per_rank:
        _accumulate(sums, metrics)
    return _finish(sums)


def _accumulate(sums: dict[str, float], metrics: Mapping[str, float]) -> None:
    """Fold one micro-batch's metrics in: sums for losses, token-weighted sums for means, max/min as such."""
    weight = metrics.get("train/tokens", 1.0)
    sums["train/tokens"] += weight
    for key, value in metrics.items():
        if key == "train/tokens" or (weight == 0 and key.endswith(("_max", "_min"))):
            continue  # the extremes of no token are placeholders
        if key.endswith("_max"):
            sums[key] = max(sums.get(key, -math.inf), value)
        elif key.endswith("_min"):
            sums[key] = min(sums.get(key, math.inf), value)
        elif key in _SUMMED_KEYS:
            sums[key] += value
        else:
            sums[key] += value * weight


def _finish(sums: Mapping[str, float]) -> dict[str, float]:
    """Turn `_accumulate`'s token-weighted sums into means."""
    weight = max(sums.get("train/tokens", 0.0), 1.0)
    return {
        key: value
        if key.endswith(("_max", "_min", "train/tokens")) or key in _SUMMED_KEYS
        else value / weight
        for key, value in sums.items()
    }
