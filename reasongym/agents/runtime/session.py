"""The machinery GRPO and DAPO share: sampling rounds, the PPO-style update, logging, checkpoints, evaluation.

The algorithm files keep their config, loss and the order of a step; this module does the rest, so that
each of them reads as "sample, score, advantages, update". ``RLSession.update`` runs ``mu`` optimizer
steps over the same rollouts, each accumulated over micro-batches; the loss function receives the whole
batch's sequence and token counts, so the accumulated gradient equals the full-batch gradient.

The configs are duck-typed: ``RLSession`` reads the fields both ``GRPOConfig`` and ``DAPOConfig`` define
(``max_steps``, ``group_size``, ``max_new_tokens``, ``temperature``, ``lr``, ``mu``, ``micro_batch_size``,
``max_grad_norm``, ``split``, ``eval_split``, ``difficulty``, ``eval_every``, ``eval_problems``, ``save_every``,
``keep_checkpoints``, ``samples_every``, ``entropy_collapse_ratio``, ``seed``, ``progress_bar``, ``tensorboard``).
A session disables dropout in the policy when it starts (TRL's ``disable_dropout=True``): the
sampler scores ``old_logp`` in eval mode, so a training-mode forward with dropout on would make the
importance ratio differ from 1 before any update.
Shapes use the legend of `reasongym.agents.common`.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from reasongym.agents.common import masked_mean, seed_everything, token_logprobs
from reasongym.agents.rl_setup import disable_dropout, resolve_splits
from reasongym.errors import ConfigError
from reasongym.metrics import MetricsWriter, plot_metrics
from reasongym.runs import (
    RunDir,
    SamplesWriter,
    checkpoint_step,
    ensure_steps_remaining,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)

REFERENCE_FILE = "reference.safetensors"
"""Weights of the frozen KL reference, saved in the run folder so that a resumed run keeps the same one."""
PLOT_KEYS = ("rollout/reward_mean", "rollout/correct_rate", "eval/", "train/entropy", "train/clip", "loss/")
"""Panels of the plot written at the end of a run."""
_SUMMED_KEYS = ("loss/policy", "loss/total")


@dataclass(frozen=True)
class RLResult:
    """What ``train_grpo`` / ``train_dapo`` did."""

    steps: int
    """Steps (rollout batches) done in total, including those before a resume."""
    resumed_from: int | None
    """Step of the checkpoint this call resumed from, or None."""
    history: tuple[dict[str, float], ...]
    """Metrics of each step this call trained, in order."""
    evals: tuple[dict[str, float], ...]
    """Each evaluation this call ran, with its ``step``; the first is before training on a fresh run."""
    run_dir: Path | None
    """The run folder, when there was one."""


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


@torch.no_grad()
def ratio_metrics(
    ratio: Tensor, logp: Tensor, old_logp: Tensor, adv: Tensor, mask: Tensor, low: float, high: float
) -> dict[str, float]:
    """Clip fractions (low and high apart), importance-ratio stats and k3 KL(pi || pi_old), over masked tokens.

    A token is clipped low when ``A < 0`` and ``r < low`` and clipped high when ``A > 0`` and ``r > high``:
    exactly the tokens whose gradient the clipped objective zeroes.
    """
    adv = adv.expand_as(ratio)  # [B, T]
    clipped_low = ((ratio < low) & (adv < 0)).to(mask.dtype)  # [B, T]
    clipped_high = ((ratio > high) & (adv > 0)).to(mask.dtype)  # [B, T]
    log_ratio = old_logp - logp  # [B, T]
    live = mask != 0  # [B, T]
    any_live = bool(live.any())
    return {
        "train/clip_low_frac": float(masked_mean(clipped_low, mask)),
        "train/clip_high_frac": float(masked_mean(clipped_high, mask)),
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
    loss_fn: Callable[..., tuple[Tensor, dict[str, float]]],
    *,
    mask: Tensor,
    ref_logp: Tensor | None = None,
    micro_batch_size: int | None = None,
    with_entropy: bool = False,
) -> dict[str, float]:
    """Backpropagate ``loss_fn`` over ``batch`` in micro-batches; the gradients add up to the full batch's.

    Every call of ``loss_fn`` gets the WHOLE batch's sequence count and token count (``batch_sequences``,
    ``batch_tokens``), so its normaliser does not depend on the split (trl#3021, verl#3741).

    Args:
        model: The policy; gradients accumulate in its ``.grad``.
        batch: Has ``input_ids`` [B, P+T], ``attention_mask`` [B, P+T], ``completion_start`` and ``old_logp`` [B, T].
        adv: [B] advantages.
        loss_fn: ``(logp, old_logp, ref_logp, adv, mask, *, batch_sequences, batch_tokens) -> (loss, metrics)``.
        mask: [B, T] loss mask.
        ref_logp: [B, T] reference log-probs, or None.
        micro_batch_size: Rows per forward/backward; None: all at once.
        with_entropy: Also return ``train/entropy``, the mean token entropy of the policy over ``mask``.

    Returns:
        The loss metrics over the batch: losses summed over micro-batches, the rest token-weighted.
    """
    rows = batch.input_ids.shape[0]
    size = micro_batch_size or rows
    scale = {"batch_sequences": rows, "batch_tokens": float(mask.sum())}
    totals: dict[str, float] = defaultdict(float)
    entropy_sum = 0.0
    for lo in range(0, rows, size):
        part = slice(lo, lo + size)
        logp, entropy = token_logprobs(
            model, batch.input_ids[part], batch.attention_mask[part], batch.completion_start,
            with_entropy=with_entropy,
        )  # fmt: skip
        ref = ref_logp[part] if ref_logp is not None else None
        loss, metrics = loss_fn(logp, batch.old_logp[part], ref, adv[part], mask[part], **scale)
        loss.backward()
        metrics["loss/total"] = float(loss.detach())
        _accumulate(totals, metrics)
        if entropy is not None:
            entropy_sum += float((entropy.detach() * mask[part]).sum())
    result = _finish(totals)
    if with_entropy:
        result["train/entropy"] = entropy_sum / max(scale["batch_tokens"], 1.0)
    return result


class _TimedGenerator:
    """Wraps a generator and adds the seconds spent generating (the rest of a rollout is verification)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        if hasattr(inner, "generate_batch"):
            self.generate_batch = self._timed(inner.generate_batch)

    def _timed(self, fn: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed

    def generate(self, prompts: Sequence[str], params: Any) -> Any:
        return self._timed(self.inner.generate)(prompts, params)


def greedy_pass_at_1(
    model: torch.nn.Module,
    tokenizer: Any,
    env: Any,
    indices: Sequence[int],
    *,
    split: str = "test",
    difficulty: int | None = None,
    max_new_tokens: int = 256,
    generator: Any | None = None,
) -> float:
    """Fraction of problems ``indices`` of ``split`` that greedy decoding solves (held-out pass@1).

    Args:
        model: The policy.
        tokenizer: Its tokenizer.
        env: An environment id or a built environment.
        indices: Problem indices.
        split: Split to evaluate on.
        difficulty: Problem difficulty; None: the env's default.
        max_new_tokens: Longest completion.
        generator: Sampler to use; None builds an ``HFGenerator``.

    Returns:
        The fraction correct, in [0, 1].
    """
    from reasongym.agents.runtime.rollout import collect_rollouts
    from reasongym.generation import HFGenerator, SamplingParams

    generator = generator or HFGenerator(model, tokenizer)
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, n=1)
    batch = collect_rollouts(
        env,
        generator,
        tokenizer,
        list(indices),
        group_size=1,
        params=params,
        split=split,
        difficulty=difficulty,
    )
    return float(batch.correct.float().mean())


@dataclass
class RLSession:
    """One RL run in progress: model, optimizer, sampler, run folder, writer, bar, and the step's timings."""

    cfg: Any
    model: torch.nn.Module
    tokenizer: Any
    env: Any
    algo: str
    generator: _TimedGenerator
    optimizer: torch.optim.Optimizer
    run: RunDir | None
    writer: MetricsWriter | None
    samples: SamplesWriter | None
    reference: torch.nn.Module | None
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None
    start_step: int
    resumed_from: int | None
    train_split: str = "train"
    eval_split: str = "test"
    cursor: int = 0
    initial_entropy: float | None = None
    warned_entropy: bool = False
    history: list[dict[str, float]] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    generated_tokens: int = 0
    step_started: float = 0.0
    bar: Any = None

    @classmethod
    def start(
        cls,
        cfg: Any,
        model: torch.nn.Module,
        tokenizer: Any,
        env_id: str | Any,
        *,
        algo: str,
        run_dir: str | Path | RunDir | None,
        generator: Any | None,
        with_reference: bool,
        eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
    ) -> RLSession:
        """Seed, build env, check its splits, disable dropout, build sampler, optimizer and (if asked) the
        frozen reference; resume from a checkpoint."""
        import reasongym
        from reasongym.generation import HFGenerator

        seed_everything(cfg.seed)
        env = reasongym.make(env_id) if isinstance(env_id, str) else env_id
        train_split, eval_split = resolve_splits(cfg, env)
        disable_dropout(model)
        run = RunDir.open(run_dir, create=True) if isinstance(run_dir, str | Path) else run_dir
        reference = _reference_model(model, run) if with_reference else None
        optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
        start, resumed_from, state = 0, None, {}
        checkpoint = latest_checkpoint(run) if run is not None else None
        if checkpoint is not None:
            ensure_steps_remaining(checkpoint_step(checkpoint), cfg.max_steps)
            start, state = load_checkpoint(checkpoint, model=model, optimizer=optimizer)
            resumed_from = start
        writer = samples = None
        if run is not None:
            writer = MetricsWriter(
                run.path, tensorboard=cfg.tensorboard, config=cfg, resume_from_step=resumed_from
            )
            samples = SamplesWriter(run, every=cfg.samples_every, resume_from_step=resumed_from)
        session = cls(
            cfg, model, tokenizer, env, algo, _TimedGenerator(generator or HFGenerator(model, tokenizer)),
            optimizer, run, writer, samples, reference, eval_fn, start, resumed_from,
            train_split=train_split, eval_split=eval_split, cursor=int(state.get("cursor", 0)), initial_entropy=state.get("initial_entropy"),
        )  # fmt: skip
        if cfg.eval_every and resumed_from is None:
            session._log(0, session.evaluate(0))
        return session

    def remaining_steps(self) -> Iterator[int]:
        """Yield the 1-based step numbers still to train, with a progress bar."""
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=self.cfg.max_steps,
            initial=self.start_step,
            desc=self.algo,
            disable=not self.cfg.progress_bar,
        )
        for step in range(self.start_step + 1, self.cfg.max_steps + 1):
            self.step_started = time.perf_counter()
            self.phases.clear()
            self.generated_tokens = 0
            yield step

    def problem_indices(self, count: int) -> list[int]:
        """The next ``count`` training problems (a seeded order that wraps around finite splits)."""
        source = getattr(getattr(self.env, "unwrapped", self.env), "source", None)
        size = source.size(self.train_split, self.cfg.difficulty) if source is not None else None
        positions = range(self.cursor, self.cursor + count)
        self.cursor += count
        if not size:
            return [self.cfg.seed * 1_000_003 + p for p in positions]
        orders: dict[int, np.ndarray] = {}
        for p in positions:
            orders.setdefault(p // size, np.random.default_rng([self.cfg.seed, p // size]).permutation(size))
        return [int(orders[p // size][p % size]) for p in positions]

    def rollouts(self, num_prompts: int) -> Any:
        """Sample ``group_size`` completions for each of the next ``num_prompts`` problems and score them."""
        from reasongym.agents.runtime.rollout import collect_rollouts
        from reasongym.generation import SamplingParams

        params = SamplingParams(
            max_new_tokens=self.cfg.max_new_tokens,
            temperature=self.cfg.temperature,
            n=self.cfg.group_size,
            seed=self.cfg.seed * 1_000_003 + self.cursor,  # reproducible across a resume
        )
        indices = self.problem_indices(num_prompts)
        started, generating = time.perf_counter(), self.generator.seconds
        batch = collect_rollouts(
            self.env, self.generator, self.tokenizer, indices, group_size=self.cfg.group_size,
            params=params, split=self.train_split, difficulty=self.cfg.difficulty,
        )  # fmt: skip
        generate_s = self.generator.seconds - generating
        self.phases["generate"] += generate_s
        self.phases["verify"] += time.perf_counter() - started - generate_s
        self.generated_tokens += int(batch.lengths.sum())
        return batch

    @torch.no_grad()
    def reference_logprobs(self, batch: Any) -> Tensor | None:
        """[B, T] log-probs of the completions under the frozen reference, or None without one."""
        if self.reference is None:
            return None
        started = time.perf_counter()
        logp, _ = token_logprobs(
            self.reference, batch.input_ids, batch.attention_mask, batch.completion_start,
            micro_batch_size=self.cfg.micro_batch_size,
        )  # fmt: skip
        self.phases["reference"] += time.perf_counter() - started
        return logp * batch.completion_mask

    def update(
        self,
        batch: Any,
        adv: Tensor,
        loss_fn: Callable[..., tuple[Tensor, dict[str, float]]],
        *,
        ref_logp: Tensor | None = None,
        mask: Tensor | None = None,
    ) -> dict[str, float]:
        """``mu`` optimizer steps over ``batch``, each accumulated over micro-batches; returns averaged metrics.

        Args:
            batch: The rollouts (a ``RolloutBatch``).
            adv: [B] advantages.
            loss_fn: ``(logp, old_logp, ref_logp, adv, mask, *, batch_sequences, batch_tokens) -> (loss, metrics)``.
            ref_logp: [B, T] reference log-probs, or None.
            mask: [B, T] loss mask; None: ``batch.completion_mask``.
        """
        started = time.perf_counter()
        mask = batch.completion_mask if mask is None else mask  # [B, T]
        per_epoch: list[dict[str, float]] = []
        entropy = 0.0
        self.model.train()
        for epoch in range(self.cfg.mu):
            totals = accumulate_gradients(
                self.model, batch, adv, loss_fn, mask=mask, ref_logp=ref_logp,
                micro_batch_size=self.cfg.micro_batch_size, with_entropy=epoch == 0,
            )  # fmt: skip
            entropy = totals.pop("train/entropy", entropy)
            per_epoch.append({**totals, **self._optimizer_step()})
        metrics = {key: float(np.mean([m[key] for m in per_epoch])) for key in per_epoch[0]}
        metrics["train/entropy"] = entropy
        metrics["train/lr"] = self.optimizer.param_groups[0]["lr"]
        self.phases["train"] += time.perf_counter() - started
        return metrics

    def _optimizer_step(self) -> dict[str, float]:
        """Clip, then step unless the gradient is non-finite; always clears the gradient."""
        params = [p for p in self.model.parameters() if p.grad is not None]
        norm = (
            float(torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm or math.inf))
            if params
            else 0.0
        )
        skipped = not math.isfinite(norm)
        if not skipped:
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return {"train/grad_norm": norm, "train/skipped_nonfinite": float(skipped)}

    def evaluate(self, step: int) -> dict[str, float]:
        """Greedy pass@1 on ``eval_split`` (and ``eval_fn``); records and returns ``eval/`` metrics."""
        size_source = getattr(getattr(self.env, "unwrapped", self.env), "source", None)
        size = size_source.size(self.eval_split, self.cfg.difficulty) if size_source is not None else None
        count = min(self.cfg.eval_problems, size) if size else self.cfg.eval_problems
        metrics = {
            "eval/pass@1": greedy_pass_at_1(
                self.model, self.tokenizer, self.env, range(count), split=self.eval_split,
                difficulty=self.cfg.difficulty, max_new_tokens=self.cfg.max_new_tokens,
                generator=self.generator.inner,
            )
        }  # fmt: skip
        if self.eval_fn is not None:
            extra = self.eval_fn(self.model)
            metrics.update({(k if "/" in k else f"eval/{k}"): float(v) for k, v in extra.items()})
        self.model.train()
        self.evals.append({"step": float(step), **metrics})
        return metrics

    def finish_step(self, step: int, metrics: dict[str, float], batch: Any) -> None:
        """Add timings and warnings, evaluate, log, write samples, checkpoint and advance the bar."""
        elapsed = time.perf_counter() - self.step_started
        metrics.update({f"perf/{name}_s": seconds for name, seconds in self.phases.items()})
        metrics["perf/step_s"] = elapsed
        metrics["perf/tokens_per_s"] = self.generated_tokens / max(elapsed, 1e-9)
        self._check_entropy(metrics)
        cfg = self.cfg
        if cfg.eval_every and (step % cfg.eval_every == 0 or step == cfg.max_steps):
            metrics.update(self.evaluate(step))
        self.history.append(metrics)
        self._log(step, metrics)
        if batch is not None and self.samples is not None and self.samples.due(step):
            self.samples.write(step, _sample_rows(batch, cfg.group_size))
        if self.run is not None and (
            (cfg.save_every and step % cfg.save_every == 0) or step == cfg.max_steps
        ):
            state = {"cursor": self.cursor, "initial_entropy": self.initial_entropy}
            save_checkpoint(
                self.run, step, model=self.model, optimizer=self.optimizer, trainer_state=state,
                keep_last=cfg.keep_checkpoints,
            )  # fmt: skip
        self.bar.update(1)
        self.bar.set_postfix(
            reward=f"{metrics.get('rollout/reward_mean', float('nan')):.3f}",
            acc=f"{metrics.get('rollout/correct_rate', float('nan')):.3f}",
            tok_s=f"{metrics['perf/tokens_per_s']:.0f}",
        )

    def _check_entropy(self, metrics: dict[str, float]) -> None:
        entropy = metrics.get("train/entropy")
        if entropy is None or not math.isfinite(entropy):
            return
        if self.initial_entropy is None:
            self.initial_entropy = entropy
        collapsed = entropy < self.cfg.entropy_collapse_ratio * self.initial_entropy
        metrics["train/entropy_collapsed"] = float(collapsed)
        if collapsed and not self.warned_entropy:
            self.warned_entropy = True
            warnings.warn(
                f"{self.algo}: policy entropy {entropy:.4f} fell below {self.cfg.entropy_collapse_ratio} x its "
                f"first value {self.initial_entropy:.4f} (entropy collapse: exploration is dying; consider "
                "clip-higher, a lower lr or a higher temperature)",
                RuntimeWarning,
                stacklevel=3,
            )

    def _log(self, step: int, metrics: Mapping[str, float]) -> None:
        if self.writer is not None:
            self.writer.log(step, metrics)

    def close(self) -> None:
        """Close the bar and the writers; plot the run's curves into ``metrics.png``."""
        if self.bar is not None:
            self.bar.close()
        for handle in (self.writer, self.samples):
            if handle is not None:
                handle.close()
        if self.run is not None and self.run.metrics_path.exists() and (self.history or self.evals):
            try:
                plot_metrics(self.run.metrics_path, self.run.path / "metrics.png", keys=PLOT_KEYS)
            except (ImportError, ConfigError) as error:  # plotting is a convenience; never fail a run on it
                warnings.warn(f"could not plot the metrics: {error}", RuntimeWarning, stacklevel=2)

    def result(self) -> RLResult:
        """The ``RLResult`` of this call."""
        steps = self.start_step + len(self.history)
        path = None if self.run is None else self.run.path
        return RLResult(steps, self.resumed_from, tuple(self.history), tuple(self.evals), path)


def _reference_model(model: torch.nn.Module, run: RunDir | None) -> torch.nn.Module:
    """A frozen copy of ``model``; a run folder keeps its weights so that a resume restores the same one."""
    from safetensors.torch import load_model, save_model

    reference = copy.deepcopy(model).eval().requires_grad_(False)
    if run is not None:
        path = run.path / REFERENCE_FILE
        if path.exists():
            load_model(reference, str(path))
        else:
            save_model(reference, str(path))
    return reference


def _accumulate(totals: dict[str, float], metrics: Mapping[str, float]) -> None:
    """Fold one micro-batch's metrics in: sums for losses, token-weighted sums for means, max/min as such."""
    weight = metrics.get("train/tokens", 1.0)
    totals["train/tokens"] += weight
    for key, value in metrics.items():
        if key == "train/tokens":
            continue
        if key.endswith("_max"):
            totals[key] = max(totals.get(key, -math.inf), value)
        elif key.endswith("_min"):
            totals[key] = min(totals.get(key, math.inf), value)
        elif key in _SUMMED_KEYS:
            totals[key] += value
        else:
            totals[key] += value * weight


def _finish(totals: Mapping[str, float]) -> dict[str, float]:
    """Turn ``_accumulate``'s token-weighted sums into means."""
    weight = max(totals.get("train/tokens", 0.0), 1.0)
    return {
        key: value
        if key.endswith(("_max", "_min", "train/tokens")) or key in _SUMMED_KEYS
        else value / weight
        for key, value in totals.items()
    }


def _sample_rows(batch: Any, group_size: int, groups: int = 2) -> list[dict[str, Any]]:
    """The first ``groups`` groups of ``batch`` as JSON-ready rows for ``samples.jsonl``."""
    rows = min(len(batch.texts), groups * group_size)
    return [
        {
            "prompt": batch.prompts[i],
            "completion": batch.texts[i],
            "reward": float(batch.rewards[i]),
            "correct": bool(batch.correct[i]),
        }
        for i in range(rows)
    ]
