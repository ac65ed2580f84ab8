"""Supervised fine-tuning on (prompt, completion) pairs, with the loss on completion tokens only.

Read top to bottom: config, result, batches, the loss, one optimizer step, the loop. The loss of a step
is the mean negative log-likelihood over every completion token of the step (all micro-batches, all
ranks), so gradient accumulation and data parallelism give the full-batch gradient. A step with a
non-finite loss or gradient is skipped with the weights untouched. With a run folder the loop
checkpoints every ``save_every`` steps and, started again on the same folder, resumes from the latest
checkpoint and reproduces the uninterrupted run. Tokenizing, padding and packing live in ``sft_data``.

Shape letters: B = sequences (rows) in a micro-batch, L = tokens per row, V = vocabulary size.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase, get_cosine_schedule_with_warmup

from reasongym.agents.common import seed_everything
from reasongym.agents.runtime import distributed
from reasongym.agents.sft_data import (
    IGNORE_INDEX,
    EpochStream,
    SFTBatch,
    SFTExample,
    collate,
    pad_token_id,
    sft_pairs_from_env,
    tokenize_pairs,
)
from reasongym.errors import ConfigError
from reasongym.metrics import MetricsWriter
from reasongym.runs import (
    RunDir,
    checkpoint_step,
    ensure_steps_remaining,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)

__all__ = [
    "IGNORE_INDEX",
    "SFTBatch",
    "SFTConfig",
    "SFTExample",
    "SFTResult",
    "build_sft_batches",
    "collate",
    "completion_loss",
    "sft_loss",
    "sft_pairs_from_env",
    "sft_step",
    "tokenize_pairs",
    "train_sft",
]


@dataclass(frozen=True)
class SFTConfig:
    """Hyperparameters of ``train_sft``."""

    lr: float = 1e-5
    """Peak learning rate of AdamW, reached after warmup, then cosine-decayed to 0 at ``max_steps``."""
    batch_size: int = 8
    """Sequences (packed rows with ``packing``) per micro-batch, per process."""
    grad_accum_steps: int = 1
    """Micro-batches per optimizer step; the gradient equals that of one batch of all of them."""
    max_steps: int = 1000
    """Optimizer steps in total (a resumed run counts the steps already done)."""
    warmup_steps: int = 0
    """Linear warmup steps; leave 0 to use ``warmup_ratio`` instead."""
    warmup_ratio: float = 0.0
    """Warmup as a fraction of ``max_steps``, used when ``warmup_steps`` is 0."""
    weight_decay: float = 0.0
    """AdamW weight decay, applied to matrices only (not to norms and biases)."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this; None does not clip."""
    max_length: int = 1024
    """Longest sequence (prompt + completion + EOS) in tokens; longer ones are cut at the end."""
    packing: bool = False
    """Concatenate examples into rows of ``max_length``; attention stays within each example through
    restarting position ids (transformers' packed-sequence masks, transformers >= 4.54)."""
    seed: int = 0
    """Seeds the global RNGs and the data order (epoch ``e`` is shuffled with ``(seed, e)``)."""
    log_every: int = 1
    """Write a metrics line every this many steps."""
    eval_every: int = 0
    """Call ``eval_fn`` every this many steps; 0 never."""
    save_every: int = 0
    """Checkpoint every this many steps (needs a run folder); 0 only at the end."""
    keep_checkpoints: int = 3
    """Newest checkpoints kept on disk."""
    tensorboard: bool | None = None
    """Mirror metrics to TensorBoard; None: when it is installed."""
    wandb_project: str | None = None
    """Mirror metrics to this Weights & Biases project; None: off."""
    progress_bar: bool = True
    """Show a tqdm bar with the loss (rank 0 only)."""

    def __post_init__(self) -> None:
        positive = (
            "batch_size",
            "grad_accum_steps",
            "max_steps",
            "max_length",
            "log_every",
            "keep_checkpoints",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)!r} is not allowed; expected an integer >= 1")
        for name in ("warmup_steps", "eval_every", "save_every"):
            if getattr(self, name) < 0:
                raise ConfigError(
                    f"{name}={getattr(self, name)!r} is not allowed; expected an integer >= 0 (0: off)"
                )
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"lr={self.lr!r} is not allowed; expected a finite float > 0")
        if not 0.0 <= self.warmup_ratio < 1.0:
            raise ConfigError(
                f"warmup_ratio={self.warmup_ratio!r} is not allowed; expected 0 <= warmup_ratio < 1"
            )
        if self.warmup_steps and self.warmup_ratio:
            raise ConfigError(
                f"warmup_steps={self.warmup_steps} and warmup_ratio={self.warmup_ratio} are both set; set one"
            )
        if self.weight_decay < 0:
            raise ConfigError(f"weight_decay={self.weight_decay!r} is not allowed; expected a float >= 0")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ConfigError(
                f"max_grad_norm={self.max_grad_norm!r} is not allowed; expected a float > 0 or None"
            )

    @property
    def num_warmup_steps(self) -> int:
        """Warmup steps in effect: ``warmup_steps``, or ``warmup_ratio * max_steps`` rounded."""
        return self.warmup_steps or round(self.warmup_ratio * self.max_steps)


@dataclass(frozen=True)
class SFTResult:
    """What ``train_sft`` did."""

    steps: int
    """Optimizer steps done in total, including those before a resume."""
    resumed_from: int | None
    """Step of the checkpoint this call resumed from, or None for a fresh start."""
    stopped_early: bool
    """True when ``stop_when`` ended training before ``max_steps``."""
    history: tuple[dict[str, float], ...]
    """The metrics of each step this call trained, in order."""
    run_dir: Path | None
    """The run folder, when there was one."""

    @property
    def final_loss(self) -> float | None:
        """``loss/sft`` of the last step trained by this call."""
        return self.history[-1]["loss/sft"] if self.history else None


# ---------------------------------------------------------------------------------------------- batches


def build_sft_batches(
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    cfg: SFTConfig,
    rng: np.random.Generator | None = None,
) -> list[SFTBatch]:
    """Tokenize ``pairs`` and collate them into micro-batches, shuffled by ``rng`` (None keeps the order).

    Args:
        tokenizer: The policy's tokenizer (needs an EOS token).
        pairs: ``(prompt, completion)`` texts; the prompt is already formatted (chat template applied).
        cfg: Supplies ``batch_size``, ``max_length`` and ``packing``.
        rng: Shuffles the examples before batching.

    Returns:
        One epoch of micro-batches.
    """
    examples = tokenize_pairs(tokenizer, pairs, cfg.max_length)
    order = rng.permutation(len(examples)) if rng is not None else np.arange(len(examples))
    return collate(
        [examples[i] for i in order],
        batch_size=cfg.batch_size,
        pad_id=pad_token_id(tokenizer),
        packing=cfg.packing,
        max_length=cfg.max_length,
    )


# ---------------------------------------------------------------------------------------------- loss


def sft_loss(
    logits: torch.Tensor, labels: torch.Tensor, *, normalizer: float | None = None
) -> tuple[torch.Tensor, dict[str, float]]:
    """Summed next-token negative log-likelihood of the labelled tokens, divided by ``normalizer``.

    Args:
        logits: [B, L, V] model outputs; position ``t`` predicts token ``t + 1``.
        labels: [B, L] target ids, ``IGNORE_INDEX`` where no loss is taken.
        normalizer: Divide the summed loss by this (the completion tokens of the whole optimizer step,
            so that accumulated micro-batches add up to the full-batch mean); None: this batch's count.

    Returns:
        ``(loss, metrics)`` with ``metrics["loss/sft"]`` the mean NLL per token of this batch and
        ``metrics["train/tokens"]`` the number of labelled tokens.
    """
    if logits.shape[:2] != labels.shape:
        raise ConfigError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} disagree on [B, L]")
    targets = labels[:, 1:]  # [B, L-1]
    nll_sum = F.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]).float(),  # [B*(L-1), V]
        targets.reshape(-1),  # [B*(L-1)]
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    )
    tokens = int((targets != IGNORE_INDEX).sum())
    loss = nll_sum / (normalizer if normalizer is not None else max(tokens, 1))
    return loss, {"loss/sft": nll_sum.item() / max(tokens, 1), "train/tokens": float(tokens)}


def completion_loss(
    model: torch.nn.Module, batch: SFTBatch, *, normalizer: float | None = None
) -> tuple[torch.Tensor, dict[str, float]]:
    """Run ``model`` on ``batch`` and return ``sft_loss`` of its completion tokens."""
    # Without a cache, transformers reads restarting position_ids as packed examples and keeps attention
    # inside each one; a cache (on by default) would silently let packed examples attend to each other.
    logits = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        use_cache=False,
    ).logits  # [B, L, V]
    return sft_loss(logits, batch.labels, normalizer=normalizer)


# ---------------------------------------------------------------------------------------------- step


def sft_step(
    model: torch.nn.Module,
    micro_batches: Sequence[SFTBatch],
    optimizer: torch.optim.Optimizer,
    cfg: SFTConfig,
    info: distributed.DistInfo | None = None,
) -> dict[str, float]:
    """One optimizer step over ``micro_batches`` (this rank's share); skipped if anything is non-finite.

    Returns:
        Metrics of the step, reduced over ranks: ``loss/sft``, ``train/tokens``, ``train/grad_norm``,
        ``train/skipped_nonfinite``.
    """
    info = info or distributed.current()
    device = next(model.parameters()).device
    local_tokens = sum(batch.num_tokens for batch in micro_batches)
    total_tokens = distributed.all_reduce_sum({"tokens": local_tokens}, info)["tokens"]
    # DDP averages gradients over ranks, so each rank divides by the mean token count per rank.
    normalizer = max(total_tokens, 1.0) / info.world_size
    nll_sum = 0.0
    for i, batch in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        sync = nullcontext() if last or not hasattr(model, "no_sync") else model.no_sync()
        with sync:
            loss, metrics = completion_loss(model, batch.to(device), normalizer=normalizer)
            loss.backward()
        nll_sum += metrics["loss/sft"] * metrics["train/tokens"]
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm or math.inf))
    bad = float(not (math.isfinite(grad_norm) and math.isfinite(nll_sum)))
    skipped = distributed.all_reduce_max({"bad": bad}, info)["bad"] > 0
    if not skipped:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    summed = distributed.all_reduce_sum({"nll": nll_sum}, info)
    return {
        "loss/sft": summed["nll"] / max(total_tokens, 1.0),
        "train/tokens": total_tokens,
        "train/grad_norm": grad_norm,
        "train/skipped_nonfinite": float(skipped),
    }


def _make_optimizer(model: torch.nn.Module, cfg: SFTConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr)


# ---------------------------------------------------------------------------------------------- loop


def train_sft(
    cfg: SFTConfig,
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    *,
    run_dir: RunDir | str | Path | None = None,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
    stop_when: Callable[[int], bool] | None = None,
) -> SFTResult:
    """Fine-tune ``model`` on ``pairs`` for ``cfg.max_steps`` optimizer steps, resuming when possible.

    Under ``torchrun`` (process group initialised with ``distributed.init_distributed``) each rank trains
    on its shard of ``pairs`` and gradients are averaged; only rank 0 writes to ``run_dir``.

    Args:
        cfg: Hyperparameters.
        model: A causal LM on its training device; trained in place.
        tokenizer: Its tokenizer.
        pairs: ``(prompt, completion)`` texts, prompts already formatted.
        run_dir: Run folder for config, metrics and checkpoints; if it holds a checkpoint, training
            resumes from the latest one. None: no files, no resume.
        eval_fn: Called with the model every ``cfg.eval_every`` steps (rank 0); returns metrics, logged
            under ``eval/`` unless already namespaced.
        stop_when: Called with the step after each step (rank 0); True ends training early, e.g. once
            a probe accuracy is reached.

    Returns:
        An ``SFTResult``.

    Raises:
        ConfigError: Fewer pairs than processes, or the latest checkpoint already reached ``max_steps``.
    """
    info = distributed.current()
    run = RunDir.open(run_dir, create=True) if isinstance(run_dir, str | Path) else run_dir
    state = _start_or_resume(cfg, model, tokenizer, pairs, run, info)
    writer = None
    if run is not None and info.is_main:
        writer = MetricsWriter(
            run.path,
            tensorboard=cfg.tensorboard,
            wandb_project=cfg.wandb_project,
            config=cfg,
            resume_from_step=state.start,
        )
    ddp_model = distributed.wrap_model(model, info)
    model.train()
    history: list[dict[str, float]] = []
    step, stopped = state.start, False
    show = cfg.progress_bar and info.is_main
    bar = tqdm(total=cfg.max_steps, initial=step, disable=not show, desc="sft")
    try:
        while step < cfg.max_steps and not stopped:
            metrics = _timed_step(ddp_model, state, cfg, info)
            step += 1
            stopped = _after_step(step, metrics, cfg, model, eval_fn, stop_when, writer, info)
            history.append(metrics)
            bar.update(1)
            bar.set_postfix(loss=f"{metrics['loss/sft']:.4f}")
            due = cfg.save_every and step % cfg.save_every == 0
            if run is not None and (due or step == cfg.max_steps or stopped):
                _save(run, step, model, state, cfg, info)
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    path = None if run is None else run.path
    return SFTResult(step, state.resumed_from, stopped, tuple(history), path)


@dataclass
class _TrainState:
    """What the loop carries from step to step, and what a checkpoint restores."""

    optimizer: torch.optim.Optimizer
    scheduler: Any
    stream: EpochStream
    start: int
    resumed_from: int | None


def _start_or_resume(
    cfg: SFTConfig,
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    run: RunDir | None,
    info: distributed.DistInfo,
) -> _TrainState:
    """Seed, build optimizer, schedule and data stream; restore them all from the latest checkpoint."""
    if len(pairs) < info.world_size:
        raise ConfigError(
            f"len(pairs)={len(pairs)} is not allowed; need at least one pair per rank ({info.world_size})"
        )
    examples = tokenize_pairs(tokenizer, distributed.shard(pairs, info), cfg.max_length)
    optimizer = _make_optimizer(model, cfg)
    scheduler = get_cosine_schedule_with_warmup(optimizer, cfg.num_warmup_steps, cfg.max_steps)
    seed_everything(cfg.seed)
    start, cursor, resumed_from = 0, None, None
    checkpoint = latest_checkpoint(run) if run is not None else None
    if checkpoint is not None:
        ensure_steps_remaining(checkpoint_step(checkpoint), cfg.max_steps)  # before touching the model
        start, trainer_state = load_checkpoint(
            checkpoint, model=model, optimizer=optimizer, scheduler=scheduler
        )
        cursor, resumed_from = trainer_state["data_cursor"], start
    stream = EpochStream(
        examples,
        seed=cfg.seed,
        cursor=cursor,
        batch_size=cfg.batch_size,
        pad_id=pad_token_id(tokenizer),
        packing=cfg.packing,
        max_length=cfg.max_length,
    )
    return _TrainState(optimizer, scheduler, stream, start, resumed_from)


def _timed_step(
    model: torch.nn.Module, state: _TrainState, cfg: SFTConfig, info: distributed.DistInfo
) -> dict[str, float]:
    """``sft_step`` on the next micro-batches, then the schedule; adds lr, epoch and speed metrics."""
    started = time.perf_counter()
    lr = state.optimizer.param_groups[0]["lr"]
    metrics = sft_step(model, state.stream.take(cfg.grad_accum_steps), state.optimizer, cfg, info)
    state.scheduler.step()
    elapsed = time.perf_counter() - started
    metrics.update({"train/lr": lr, "train/epoch": float(state.stream.epoch), "perf/step_time_s": elapsed})
    metrics["perf/tokens_per_s"] = metrics["train/tokens"] / max(elapsed, 1e-9)
    return metrics


def _after_step(
    step: int,
    metrics: dict[str, float],
    cfg: SFTConfig,
    model: torch.nn.Module,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None,
    stop_when: Callable[[int], bool] | None,
    writer: MetricsWriter | None,
    info: distributed.DistInfo,
) -> bool:
    """Evaluate, log and ask ``stop_when`` on rank 0; returns whether every rank should stop."""
    stop = False
    if info.is_main:
        if eval_fn is not None and cfg.eval_every and step % cfg.eval_every == 0:
            results = eval_fn(model)
            metrics.update({(k if "/" in k else f"eval/{k}"): float(v) for k, v in results.items()})
            model.train()  # eval_fn may have switched to eval mode
        if writer is not None and (step % cfg.log_every == 0 or metrics["train/skipped_nonfinite"]):
            writer.log(step, metrics)
        stop = bool(stop_when(step)) if stop_when is not None else False
    return distributed.all_reduce_max({"stop": float(stop)}, info)["stop"] > 0


def _save(
    run: RunDir,
    step: int,
    model: torch.nn.Module,
    state: _TrainState,
    cfg: SFTConfig,
    info: distributed.DistInfo,
) -> None:
    if info.is_main:
        save_checkpoint(
            run,
            step,
            model=model,
            optimizer=state.optimizer,
            scheduler=state.scheduler,
            trainer_state={"data_cursor": state.stream.cursor()},
            keep_last=cfg.keep_checkpoints,
        )
    distributed.barrier()  # no rank runs ahead of a checkpoint it might resume from
