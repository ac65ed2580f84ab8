"""Supervised fine-tuning on (prompt, completion) pairs, with the loss on completion tokens only.

Read top to bottom (the config, `SFTConfig`, is in the torch-free `reasongym.agents.algorithm_configs`):
result, batches, the loss, one optimizer step, the loop. The loss of a step is the mean negative log-likelihood over every completion token of the step (all micro-batches, all
ranks), so gradient accumulation and data parallelism give the full-batch gradient. A step with a
non-finite loss or gradient is skipped with the weights untouched. With a run folder the loop
checkpoints every ``save_every`` steps and, started again on the same folder, resumes from the latest
checkpoint and reproduces the uninterrupted run. Tokenizing, padding and packing live in ``sft_data``.

With ``run.lora.rank`` > 0 only LoRA adapters train, as in GRPO and DAPO (`run_adapters`): the run folder
records the base model, checkpoints hold the adapters and their optimizer state, and ``load_policy`` of the
run (``reasongym eval RUN``) gives the base with the adapters merged in. A model that carries adapters already
(STaR's, reset each iteration) trains those.

Shape letters: B = sequences (rows) in a micro-batch, L = tokens per row, V = vocabulary size.

Why this file is long: it is one algorithm read top to bottom (config, loss, step, loop, resume), and its
step carries what every SFT run may need across processes and precisions (DDP, global normalisers, the
fp16 gradient scaler); the data side already lives in ``sft_data``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from reasongym import distributed
from reasongym.agents.algorithm_configs import SFTConfig
from reasongym.agents.common import enable_checkpointing, seed_everything
from reasongym.agents.config import RunConfig, resolve_splits
from reasongym.agents.presets import shared_configs
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.optimizer import (
    allow_tf32,
    autocast_context,
    build_optimizer,
    check_autocast,
    grad_scaler,
    restore_optimizer,
)
from reasongym.agents.runtime.setup import run_adapters
from reasongym.agents.sft_data import (
    IGNORE_INDEX,
    EpochStream,
    SFTBatch,
    SFTExample,
    build_sft_batches,
    collate,
    pad_token_id,
    sft_pairs_from_env,
    tokenize_pairs,
)
from reasongym.errors import ConfigError
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import HFGenerator
from reasongym.policy.checkpoints import load_checkpoint
from reasongym.policy.lora import adapters_of
from reasongym.runs.folder import RunDir
from reasongym.runs.lifecycle import Plot, RunLife

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


SFT_PLOT_PANELS = ("loss/sft", "eval/", "train/grad_norm")
"""Panels of the plot written at the end of an SFT run (``metrics.png``)."""


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
    run: RunConfig,
    info: distributed.DistInfo | None = None,
    *,
    scaler: Any = None,
) -> dict[str, float]:
    """One optimizer step over ``micro_batches`` (this rank's share); skipped if anything is non-finite.

    The forward passes run under ``run.autocast``, the losses and the step through ``scaler`` (`grad_scaler`).

    Returns:
        Metrics of the step, reduced over ranks: ``loss/sft``, ``train/tokens``, ``train/grad_norm``,
        ``train/skipped_nonfinite``.
    """
    info = info or distributed.current()
    scaler = scaler or grad_scaler(run)
    device = next(model.parameters()).device
    local_tokens = sum(batch.num_tokens for batch in micro_batches)
    total_tokens = distributed.all_reduce_sum({"tokens": local_tokens}, info)["tokens"]
    # DDP averages gradients over ranks, so each rank divides by the mean token count per rank.
    normalizer = max(total_tokens, 1.0) / info.world_size
    nll_sum = 0.0
    for i, batch in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        sync = nullcontext() if last or not hasattr(model, "no_sync") else model.no_sync()
        with sync, distributed.collective("backward", info):  # DDP's all-reduce: a stall names its rank
            with autocast_context(run):
                loss, metrics = completion_loss(model, batch.to(device), normalizer=normalizer)
            scaler.scale(loss).backward()
        nll_sum += metrics["loss/sft"] * metrics["train/tokens"]
    params = [p for p in model.parameters() if p.grad is not None]
    scaler.unscale_(optimizer)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, run.max_grad_norm or math.inf))
    bad = float(not (math.isfinite(grad_norm) and math.isfinite(nll_sum)))
    skipped = distributed.all_reduce_max({"bad": bad}, info)["bad"] > 0
    if not skipped:
        scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    summed = distributed.all_reduce_sum({"nll": nll_sum}, info)
    return {
        "loss/sft": summed["nll"] / max(total_tokens, 1.0),
        "train/tokens": total_tokens,
        "train/grad_norm": grad_norm,
        "train/skipped_nonfinite": float(skipped),
    }


# ---------------------------------------------------------------------------------------------- loop


def train_sft(
    cfg: SFTConfig,
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    *,
    run: RunConfig | None = None,
    run_dir: RunDir | str | Path | None = None,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
    stop_when: Callable[[int], bool] | None = None,
    env: Any | None = None,
) -> SFTResult:
    """Fine-tune ``model`` on ``pairs`` for ``run.max_steps`` optimizer steps, resuming when possible.

    Under ``torchrun`` each rank trains on its shard of ``pairs`` (DDP); only rank 0 writes ``run_dir``.

    Args:
        cfg: SFT's own settings (batch, length, packing).
        model: A causal LM on its training device; trained in place.
        tokenizer: Its tokenizer.
        pairs: ``(prompt, completion)`` texts, prompts already formatted.
        run: Steps, optimizer, cadence and logging; None: the ``default`` preset's (lr 1e-5, cosine).
        run_dir: Run folder for config, metrics and checkpoints; if it holds a checkpoint, training
            resumes from the latest one. None: no files, no resume.
        eval_fn: Called with the model every ``run.eval_every`` steps (rank 0); its metrics are logged.
        stop_when: Called with each step's number (rank 0); True ends training there.
        env: The pairs' environment: its held-out greedy pass@1 is logged as ``eval/pass@1`` every
            ``run.eval_every`` steps, and ``cfg.stop_at_accuracy`` stops on it.

    Returns:
        An ``SFTResult``.

    Raises:
        ConfigError: Settings SFT cannot honour, fewer pairs than processes, or a finished run.
    """
    run = run or shared_configs("default", "sft")["run"]
    info = distributed.current()
    _check_run(cfg, run, model, env, info)
    if env is not None and run.eval_every:
        eval_fn, stop_when = _held_out(cfg, run, tokenizer, env, eval_fn, stop_when)
    if run.gradient_checkpointing:
        enable_checkpointing(model)
    env_id = getattr(getattr(env, "spec", None), "id", None)
    plot = Plot("metrics.png", SFT_PLOT_PANELS, "sft", env_id)
    with RunLife.open(
        run_dir, run, plot=plot, info=info
    ) as life:  # a second trainer on the folder fails here
        state = _start_or_resume(cfg, run, model, tokenizer, pairs, life, info)
        life.open_writers({"algo": "sft", "run": run, "sft": cfg}, state.resumed_from)
        step, stopped, history = _steps(state, run, model, life, eval_fn, stop_when, info)
        return SFTResult(step, state.resumed_from, stopped, tuple(history), life.path)


def _check_run(cfg: SFTConfig, run: RunConfig, model: torch.nn.Module, env: Any, info: Any) -> None:
    """Raise ConfigError for settings SFT cannot honour (a stop without evaluations, FSDP, CPU autocast)."""
    if cfg.stop_at_accuracy is not None and not (env is not None and run.eval_every):
        raise ConfigError(
            "stop_at_accuracy needs held-out evaluations: pass env= and set run.eval_every > 0 "
            f"(got env={'set' if env is not None else None}, eval_every={run.eval_every})"
        )
    check_autocast(run, model)
    allow_tf32(run, model)
    if run.parallelism == "fsdp" and info.world_size > 1:
        raise ConfigError(
            "parallelism='fsdp' is not allowed for SFT (nor STaR, whose fine-tuning is SFT): FSDP shards GRPO "
            "and DAPO only; use parallelism='ddp'"
        )


def _steps(
    state: Any,
    run: RunConfig,
    model: torch.nn.Module,
    life: RunLife,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None,
    stop_when: Callable[[int], bool] | None,
    info: Any,
) -> tuple[int, bool, list[dict[str, float]]]:
    """Train from ``state.start`` to ``run.max_steps`` (or an early stop) with a bar and checkpoints;
    returns the last step, whether it stopped early, and each step's metrics."""
    ddp_model = parallel.wrap_model(model, info)
    model.train()
    history: list[dict[str, float]] = []
    step, stopped = state.start, False
    bar = tqdm(total=run.max_steps, initial=step, disable=not (run.progress_bar and info.is_main), desc="sft")
    probe = None
    try:
        while step < run.max_steps and not stopped:
            life.hold(f"step {step + 1}")  # Ctrl-C and SIGTERM wait for the step to finish, then it is saved
            metrics = _timed_step(ddp_model, state, run, info)
            step += 1
            stopped = _after_step(step, metrics, run, model, eval_fn, stop_when, life, info)
            history.append(metrics)
            bar.update(1)
            probe = metrics.get("eval/pass@1", probe)
            bar.set_postfix(_postfix(metrics["loss/sft"], probe))
            if life.save_due(step) or (stopped and life.folder is not None):
                _save(life, step, model, state)
            life.release()
    except KeyboardInterrupt:
        raise life.interrupted(step, save=lambda: _save(life, step, model, state)) from None
    finally:
        bar.close()
    return step, stopped, history


def _postfix(loss: float, probe: float | None) -> dict[str, str]:
    """The bar's live numbers: the loss, and the held-out accuracy of the last probe."""
    return {"loss": f"{loss:.4f}", **({"held-out": f"{probe:.2f}"} if probe is not None else {})}


def _held_out(
    cfg: SFTConfig,
    run: RunConfig,
    tokenizer: PreTrainedTokenizerBase,
    env: Any,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None,
    stop_when: Callable[[int], bool] | None,
) -> tuple[Callable[[torch.nn.Module], Mapping[str, float]], Callable[[int], bool]]:
    """``eval_fn`` and ``stop_when`` extended with held-out greedy pass@1 and ``cfg.stop_at_accuracy``."""

    _, eval_split = resolve_splits(run, env)
    latest = {"pass@1": -1.0}

    def evaluate(model: torch.nn.Module) -> dict[str, float]:
        latest["pass@1"] = greedy_pass_at_1(
            HFGenerator(model, tokenizer),
            env,
            tokenizer=tokenizer,
            split=eval_split,
            num_problems=run.eval_problems,
            difficulty=run.difficulty,
            max_new_tokens=cfg.eval_max_new_tokens,
        )
        return {"eval/pass@1": latest["pass@1"], **(eval_fn(model) if eval_fn is not None else {})}

    def stop(step: int) -> bool:
        reached = cfg.stop_at_accuracy is not None and latest["pass@1"] >= cfg.stop_at_accuracy
        return reached or (stop_when is not None and bool(stop_when(step)))

    return evaluate, stop


@dataclass
class _TrainState:
    """What the loop carries from step to step, and what a checkpoint restores."""

    optimizer: torch.optim.Optimizer
    scheduler: Any
    stream: EpochStream
    micro_batches: int
    """Micro-batches per optimizer step."""
    start: int
    resumed_from: int | None
    scaler: Any = None
    """The gradient scaler (`grad_scaler`: enabled for fp16 autocast only)."""
    adapted: Any = None
    """The LoRA ``PeftModel`` whose adapters train and are checkpointed, or None (every weight trains)."""


def _start_or_resume(
    cfg: SFTConfig,
    run_cfg: RunConfig,
    model: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Sequence[tuple[str, str]],
    life: RunLife,
    info: distributed.DistInfo,
) -> _TrainState:
    """Seed, build optimizer, schedule and data stream; restore them all from the latest checkpoint."""
    if len(pairs) < info.world_size:
        raise ConfigError(
            f"len(pairs)={len(pairs)} is not allowed; need at least one pair per rank ({info.world_size})"
        )
    micro = run_cfg.micro_batch_size or cfg.batch_size
    if cfg.batch_size % micro:
        raise ConfigError(
            f"micro_batch_size={micro} is not allowed with batch_size={cfg.batch_size}; it must divide it "
            "(every optimizer step sees batch_size sequences)"
        )
    examples = tokenize_pairs(tokenizer, distributed.shard(pairs, info), cfg.max_length)
    checkpoint = life.checkpoint_to_resume()  # a finished run is refused before the model is touched
    adapted = adapters_of(model) or run_adapters(model, run_cfg, life)
    optimizer, scheduler = build_optimizer(model, run_cfg)  # the trainable weights: the adapters with LoRA
    seed_everything(run_cfg.seed)
    start, cursor, resumed_from = 0, None, None
    if checkpoint is not None:
        start, trainer_state = load_checkpoint(
            checkpoint, model=adapted or model, optimizer=optimizer, scheduler=scheduler
        )
        restore_optimizer(optimizer, scheduler, run_cfg)
        cursor, resumed_from = trainer_state["data_cursor"], start
    stream = EpochStream(
        examples,
        seed=run_cfg.seed,
        cursor=cursor,
        batch_size=micro,
        pad_id=pad_token_id(tokenizer),
        packing=cfg.packing,
        max_length=cfg.max_length,
    )
    micro_batches = cfg.batch_size // micro
    scaler = grad_scaler(run_cfg)
    return _TrainState(optimizer, scheduler, stream, micro_batches, start, resumed_from, scaler, adapted)


def _timed_step(
    model: torch.nn.Module, state: _TrainState, run: RunConfig, info: distributed.DistInfo
) -> dict[str, float]:
    """``sft_step`` on the next micro-batches, then the schedule; adds lr, epoch and speed metrics."""
    started = time.perf_counter()
    lr = state.optimizer.param_groups[0]["lr"]
    micro_batches = state.stream.take(state.micro_batches)
    metrics = sft_step(model, micro_batches, state.optimizer, run, info, scaler=state.scaler)
    state.scheduler.step()
    elapsed = time.perf_counter() - started
    metrics.update({"train/lr": lr, "train/epoch": float(state.stream.epoch), "perf/step_time_s": elapsed})
    metrics["perf/tokens_per_s"] = metrics["train/tokens"] / max(elapsed, 1e-9)
    return metrics


def _after_step(
    step: int,
    metrics: dict[str, float],
    cfg: RunConfig,
    model: torch.nn.Module,
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None,
    stop_when: Callable[[int], bool] | None,
    life: RunLife,
    info: distributed.DistInfo,
) -> bool:
    """Evaluate, log and ask ``stop_when`` on rank 0; returns whether every rank should stop."""
    stop = False
    if info.is_main:
        if eval_fn is not None and cfg.eval_every and step % cfg.eval_every == 0:
            results = eval_fn(model)
            metrics.update({(k if "/" in k else f"eval/{k}"): float(v) for k, v in results.items()})
            model.train()  # eval_fn may have switched to eval mode
        if step % cfg.log_every == 0 or metrics["train/skipped_nonfinite"]:
            life.log(step, metrics)
        stop = bool(stop_when(step)) if stop_when is not None else False
    return distributed.all_reduce_max({"stop": float(stop)}, info)["stop"] > 0


def _save(life: RunLife, step: int, model: torch.nn.Module, state: _TrainState) -> None:
    """Checkpoint ``step``: the weights (the adapters with LoRA), optimizer, schedule and the data stream's place."""
    life.save(
        step,
        model=state.adapted or model,
        optimizer=state.optimizer,
        scheduler=state.scheduler,
        trainer_state={"data_cursor": state.stream.cursor()},
    )
