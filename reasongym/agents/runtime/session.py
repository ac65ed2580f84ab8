"""One RL run in progress, shared by GRPO and DAPO: sampling rounds, the update, logging, checkpoints, evaluation.

The algorithm files keep their config, loss and the order of a step; the session does the rest, so that
each of them reads as "sample, score, advantages, update". It is typed on the shared configs only
(`RunConfig`, `RolloutConfig`); what differs between algorithms reaches it as arguments (the
`PolicyLoss`, ``mu``, whether a KL reference is needed). ``update`` runs ``mu`` optimizer steps over the
same rollouts, each accumulated over micro-batches normalised by the whole batch's totals.

A session disables dropout in the policy when it starts (TRL's ``disable_dropout=True``): the sampler
scores ``old_logp`` in eval mode, so a training-mode forward with dropout on would make the importance
ratio differ from 1 before any update. Held-out evaluation goes through `reasongym.evaluation.evaluate`,
like ``reasongym eval``. Shapes use the legend of `reasongym.agents.common`.

Under torch.distributed (`reasongym.distributed`) every rank runs the same session: the
problem order is global (one cursor, the same on every rank) and each rank samples its round-robin share
of each round's prompts, whole groups, with a sampling seed derived from the seed and its rank. The loss
normalisers (`BatchTotals`) are summed over ranks and DDP averages the gradients, so N processes take the
step one process would take on all the data. Rank 0 alone writes; every rank resumes from the checkpoint
rank 0 picks, and logged metrics cover every rank.

What a session is built from before its first step (settings checked, optimizer, resumed weights, the KL
reference) is `reasongym.agents.runtime.setup`'s. The life of the run around its steps (the locked folder, the
config record, metrics and samples, checkpoints and resume, what rank 0 alone writes, Ctrl-C and SIGTERM, the
plot) is `reasongym.runs.lifecycle.RunLife`'s: the session holds one and says what a step is.

Why this file is long: a session is one idea, the state and steps of one RL run, and each of its methods
carries what that step needs in one process and across processes (sharded sampling, gathered metrics,
DDP or FSDP); splitting the multi-process half off would make every step a two-file read.
"""

from __future__ import annotations

import contextlib
import functools
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

import reasongym
from reasongym import distributed
from reasongym.agents.common import seed_everything, token_logprobs
from reasongym.agents.config import RolloutConfig, RunConfig, resolve_splits
from reasongym.agents.runtime import parallel
from reasongym.agents.runtime.async_rollouts import AsyncRollouts, check_async, problem_order
from reasongym.agents.runtime.diagnostics import (
    EntropyWatch,
    ZeroVarianceWatch,
    advantage_metrics,
    progress_postfix,
)
from reasongym.agents.runtime.engine import EngineSync, build_sampler, sampling_context
from reasongym.agents.runtime.engine_ahead import EngineAhead
from reasongym.agents.runtime.heap import HeapTrimmer
from reasongym.agents.runtime.optimizer import autocast_context, grad_scaler, optimizer_step
from reasongym.agents.runtime.setup import (
    check_settings,
    optimizer_for,
    prepare_policy,
    resume_weights,
)
from reasongym.agents.runtime.update import (
    BackwardPart,
    PolicyLoss,
    accumulate_gradients,
    global_totals,
    merge_rank_metrics,
    policy_backward_part,
    recompute_old_logp,
)
from reasongym.envs.rubric import term_metrics
from reasongym.errors import ConfigError, TrainingInterrupted
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import HFGenerator
from reasongym.generation.base import TimedGenerator
from reasongym.generation.engines import engine_identity
from reasongym.generation.progress import TokenCount
from reasongym.rollouts.batch import ROW_TENSORS, collect_rollouts, rollout_metrics, sample_rows
from reasongym.rollouts.env_pool import EnvPool
from reasongym.runs.folder import RunDir
from reasongym.runs.helper_death import next_batch
from reasongym.runs.lifecycle import Plot, RunLife

PLOT_KEYS = (
    "rollout/reward_mean",
    "rollout/correct_rate",
    "eval/",
    "train/entropy",
    "train/clip",
    "loss/",
    "rollout/zero_std_group_frac",
    "rollout/all_",
    "train/ratio_",
    "train/advantage_",
    "rollout/truncation_rate",
    "distill/",
)
"""Panels of the plot written at the end of a run."""


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


@dataclass
class RLSession:
    """Model, optimizer, sampler, run folder, writers and bar of one RL run, and the step's timings."""

    run_cfg: RunConfig
    rollout_cfg: RolloutConfig
    model: torch.nn.Module
    tokenizer: Any
    env: Any
    algo: str
    generator: TimedGenerator
    optimizer: torch.optim.Optimizer
    scheduler: Any
    life: RunLife
    """The run folder, its writers and checkpoints, the held signals (`reasongym.runs.lifecycle`)."""
    reference: torch.nn.Module | None
    eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None
    start_step: int
    resumed_from: int | None
    train_split: str = "train"
    eval_split: str = "test"
    cursor: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    generated_tokens: int = 0
    step_started: float = 0.0
    bar: Any = None
    info: distributed.DistInfo = distributed.SINGLE_PROCESS
    """This process's place in the job; rank 0 alone writes."""
    train_model: torch.nn.Module | None = None
    """The model the update runs forward and backward (``model``, or its DDP wrapper across processes)."""
    scaler: Any = None
    """The gradient scaler (`grad_scaler`: enabled for fp16 autocast only)."""
    env_pool: EnvPool | None = None
    """The env copies the rollouts play on, kept from step to step (made at the first rollout)."""
    reference_without_adapters: bool = False
    """The KL reference is ``model`` with its LoRA adapters off."""
    adapted: Any = None
    """With LoRA, the ``PeftModel`` around ``model``: checkpoints hold its adapters, and ``model`` inside its
    ``disable_adapter()`` is the KL reference."""
    heap: HeapTrimmer = field(default_factory=HeapTrimmer)
    """Hands freed heap pages back to the OS at phase boundaries, once the resident set has grown."""
    sampler_is_policy: bool = True
    """The sampler runs the trained module itself (`HFGenerator` on ``model``), so its log-probs are the
    trainer's; False for another engine (vLLM, a served model): the trainer then rescores every batch."""
    engine: EngineSync = field(default_factory=lambda: EngineSync(None, None))
    """Keeps a vLLM engine's copy of the weights current (nothing to do for `HFGenerator`)."""
    saved_cursor: int = 0
    """The problem cursor after the last finished step: what a checkpoint saved on interrupt records."""
    zero_variance: ZeroVarianceWatch = field(default_factory=ZeroVarianceWatch)
    """Warns once when most groups have had equal rewards for many steps (too easy or too hard)."""
    sampler: AsyncRollouts | EngineAhead | None = None
    """With ``max_staleness`` >= 1, what draws batches ahead: a process, or a thread driving vLLM (None: none)."""
    entropy: EntropyWatch = field(default_factory=EntropyWatch)
    """Warns once when the policy's entropy collapses below a share of its first value (kept in checkpoints)."""

    @classmethod
    def start(
        cls,
        run_cfg: RunConfig,
        rollout_cfg: RolloutConfig,
        model: torch.nn.Module,
        tokenizer: Any,
        env_id: str | Any,
        *,
        algo: str,
        config_record: Mapping[str, Any],
        run_dir: str | Path | RunDir | None,
        generator: Any | None,
        with_reference: bool,
        eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None = None,
        groups: bool = True,
    ) -> RLSession:
        """Lock the run folder (released by `close`), seed, build env, check its splits, disable dropout,
        build sampler, optimizer and (if asked) the frozen reference; resume from the run folder's newest
        intact checkpoint. ``config_record``: what ``config.json`` stores; ``groups``: groups are compared."""

        info = distributed.current()
        check_settings(run_cfg, rollout_cfg, model, info, groups=groups)
        # One lock per job: rank 0 holds it for every process.
        life = RunLife.open(run_dir, run_cfg, info=info)
        try:
            session = cls._build(
                run_cfg,
                rollout_cfg,
                model,
                tokenizer,
                env_id,
                life,
                algo=algo,
                config_record=config_record,
                generator=generator,
                with_reference=with_reference,
                eval_fn=eval_fn,
            )
        except BaseException:
            life.close(plot=False)  # the lock is released if starting fails, else `close` releases it
            raise
        session.zero_variance.warned = not groups  # no group is compared: nothing to warn of
        if rollout_cfg.max_staleness:
            check_async(session, generator)
            exact = not session.engine.holds_weights and rollout_cfg.stale_old_logp == "sampler"
            ahead = EngineAhead if session.engine.holds_weights else AsyncRollouts  # vLLM: a thread drives it
            session.sampler, session.sampler_is_policy = ahead.start(session), exact  # exact: not rescored
        return session

    @classmethod
    def _build(
        cls,
        run_cfg: RunConfig,
        rollout_cfg: RolloutConfig,
        model: torch.nn.Module,
        tokenizer: Any,
        env_id: str | Any,
        life: RunLife,
        *,
        algo: str,
        config_record: Mapping[str, Any],
        generator: Any | None,
        with_reference: bool,
        eval_fn: Callable[[torch.nn.Module], Mapping[str, float]] | None,
    ) -> RLSession:
        """`start`'s work inside the locked run folder, in order."""
        seed_everything(run_cfg.seed)
        env = reasongym.make(env_id) if isinstance(env_id, str) else env_id
        life.plot = Plot("metrics.png", PLOT_KEYS, algo, getattr(getattr(env, "spec", None), "id", None))
        train_split, eval_split = resolve_splits(run_cfg, env)
        adapted, reference = prepare_policy(model, run_cfg, life, with_reference)
        start, state, checkpoint = resume_weights(life, adapted or model)
        train_model = parallel.wrap_model(model, life.info, run_cfg.parallelism)  # DDP, or sharded in place
        optimizer, scheduler = optimizer_for(model, run_cfg, checkpoint)
        resumed_from = start or None
        sampler = generator or build_sampler(model, tokenizer, rollout_cfg, adapted, run_cfg.seed, life.info)
        life.open_writers(
            {"algo": algo, **config_record, "engine": engine_identity(sampler)}, resumed_from, samples=True
        )
        session = cls(
            run_cfg,
            rollout_cfg,
            model,
            tokenizer,
            env,
            algo,
            TimedGenerator(sampler),
            optimizer,
            scheduler,
            life,
            reference,
            eval_fn,
            start,
            resumed_from,
            train_split=train_split,
            eval_split=eval_split,
            cursor=int(state.get("cursor", 0)),
            entropy=EntropyWatch(run_cfg.entropy_collapse_ratio, state.get("initial_entropy")),
            info=life.info,
            train_model=train_model,
            scaler=grad_scaler(run_cfg),
            adapted=adapted,
            reference_without_adapters=with_reference and adapted is not None,
            sampler_is_policy=isinstance(sampler, HFGenerator) and sampler.model is model,
            engine=EngineSync(sampler, model, adapted, synced=0 if generator is None else None),
        )
        session._begin(sampler)
        return session

    def _begin(self, sampler: Any) -> None:
        """Evaluate the starting model on a fresh run; count sampled tokens in the bar as they come."""
        if self.run_cfg.eval_every and self.resumed_from is None:
            self.life.log(0, self.evaluate(0))
        self.saved_cursor = self.cursor
        if isinstance(sampler, HFGenerator) and self.run_cfg.progress_bar and self.info.is_main:
            sampler.progress = TokenCount(lambda: self.bar)

    def remaining_steps(self) -> Iterator[int]:
        """Yield the 1-based step numbers still to train, with a progress bar."""
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=self.run_cfg.max_steps,
            initial=self.start_step,
            desc=self.algo,
            disable=not (self.run_cfg.progress_bar and self.info.is_main),
        )
        for step in range(self.start_step + 1, self.run_cfg.max_steps + 1):
            self.step_started = time.perf_counter()
            self.phases.clear()
            self.generated_tokens = 0
            yield step

    def interrupted(self) -> TrainingInterrupted:
        """After Ctrl-C or SIGTERM: save the last finished step (`RunLife.interrupted`), say where."""
        done, state = self.start_step + len(self.history), {"cursor": self.saved_cursor}
        state["initial_entropy"] = self.entropy.initial
        save = functools.partial(
            self.life.save,
            done,
            model=self.adapted or self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            trainer_state=state,
        )
        return self.life.interrupted(done, save=save)

    def problem_indices(self, count: int) -> list[int]:
        """The next ``count`` training problems (a seeded order that wraps around finite splits)."""
        source = getattr(getattr(self.env, "unwrapped", self.env), "source", None)
        size = source.size(self.train_split, self.run_cfg.difficulty) if source is not None else None
        self.cursor += count
        return problem_order(self.run_cfg.seed, self.cursor - count, count, size)

    def rollouts(self, num_prompts: int) -> Any:
        """Sample ``group_size`` completions for each of the next ``num_prompts`` problems and score them.

        Across processes ``num_prompts`` counts every rank's prompts; this rank samples and returns its
        share (`distributed.shard`: problems ``rank, rank + W, ..`` of the round), whole groups.
        """
        if self.sampler is not None:  # drawn ahead by the sampler process, from the same problems and seed
            self.problem_indices(num_prompts)
            batch, waited = next_batch(self, self.start_step + len(self.history) + 1)
            self.phases["wait_for_sampler"] += waited
            return self._scored(batch)
        seed = distributed.rank_seed(self.run_cfg.seed * 1_000_003 + self.cursor, self.info)  # resumable
        self.env_pool = self.env_pool or EnvPool(self.env)
        indices = distributed.shard(self.problem_indices(num_prompts), self.info)
        self.phases["weight_sync"] += self.engine.ready()  # an engine with its own copy of the weights (vLLM)
        started, generating = time.perf_counter(), self.generator.seconds
        with sampling_context(self.engine, self.model, self.adapted, autocast_context(self.run_cfg)):
            batch = collect_rollouts(
                self.env,
                self.generator,
                self.tokenizer,
                indices,
                params=self.rollout_cfg.sampling(seed),
                split=self.train_split,
                difficulty=self.run_cfg.difficulty,
                pool=self.env_pool,
            )
        self.engine.rest()  # a GPU engine frees its memory for the update
        generate_s = self.generator.seconds - generating
        self.phases["generate"] += generate_s
        self.phases["verify"] += time.perf_counter() - started - generate_s
        return self._scored(batch)

    def _scored(self, batch: Any) -> Any:
        """``batch`` counted, and rescored by the policy unless its sampler was the policy itself."""
        self.generated_tokens += int(batch.lengths.sum())
        if not batch.old_logp_known or not self.sampler_is_policy:
            # A text-only generator, or another engine (vLLM, a served model): the policy scores what was
            # sampled (the engine's own log-probs stay beside them, for the off-policy correction).
            started = time.perf_counter()
            with parallel.gathered(self.model), autocast_context(self.run_cfg):
                batch = recompute_old_logp(
                    self.model, batch, self.run_cfg.micro_batch_size, self.rollout_cfg.logprob_temperature
                )
            self.phases["old_logp"] += time.perf_counter() - started
        self.heap()  # the sampler's KV caches and logits
        return batch

    def rollout_metrics(self, *batches: Any) -> dict[str, float]:
        """``rollout/`` and ``reward/<name>`` metrics of ``batches`` on every rank (`rollout_metrics`, `term_metrics`)."""

        rows = {
            name: None
            if any(getattr(b, name) is None for b in batches)
            else torch.cat([getattr(b, name).cpu() for b in batches])
            for name in ROW_TENSORS
        }
        graded = [(outcome, text) for b in batches for outcome, text in zip(b.outcomes, b.texts, strict=True)]
        per_rank = distributed.all_gather_objects({**rows, "graded": graded}, self.info)
        merged = {
            name: None if any(r[name] is None for r in per_rank) else torch.cat([r[name] for r in per_rank])
            for name in ROW_TENSORS
        }
        pairs = [pair for r in per_rank for pair in r["graded"]]
        terms = term_metrics(self.env, [outcome for outcome, _ in pairs], [text for _, text in pairs])
        return {**rollout_metrics(merged, self.rollout_cfg.group_size), **terms}

    @torch.no_grad()
    def reference_logprobs(self, batch: Any) -> Tensor | None:
        """[B, T] log-probs of the completions under the frozen reference (at the loss's temperature,
        `RolloutConfig.logprob_temperature`), or None without one."""
        if self.reference is None and not self.reference_without_adapters:
            return None
        started = time.perf_counter()
        reference = self.reference or self.model
        adapters_off = self.adapted.disable_adapter() if self.reference is None else contextlib.nullcontext()
        with adapters_off, parallel.gathered(reference), autocast_context(self.run_cfg):
            logp, _ = token_logprobs(
                reference,
                batch.input_ids,
                batch.attention_mask,
                batch.completion_start,
                micro_batch_size=self.run_cfg.micro_batch_size,
                temperature=self.rollout_cfg.logprob_temperature,
            )
        self.phases["reference"] += time.perf_counter() - started
        self.heap()
        return logp * batch.completion_mask

    def update(
        self,
        batch: Any,
        adv: Tensor,
        loss: PolicyLoss,
        *,
        mu: int,
        ref_logp: Tensor | None = None,
        mask: Tensor | None = None,
        weights: Tensor | None = None,
        backward_part: BackwardPart = policy_backward_part,
    ) -> dict[str, float]:
        """``mu`` optimizer steps over ``batch``, each accumulated over micro-batches; returns averaged metrics.

        Across processes ``batch`` is this rank's share (it may be empty while others have rows); the
        normalisers are the whole batch's, and the metrics cover every rank.

        Args:
            batch: The rollouts (a ``RolloutBatch``); ``adv``: their [B] advantages.
            loss: The algorithm's loss with its config bound.
            mu: Optimizer steps over the same rollouts (PPO epochs).
            ref_logp: [B, T] reference log-probs, or None; ``weights``: [B, T] the off-policy correction's, or None.
            mask: [B, T] loss mask; None: ``batch.completion_mask``.
            backward_part: One micro-batch's forward and backward (distillation's needs the whole vocabulary).
        """
        if not batch.old_logp_known:
            raise ConfigError(
                "batch.old_logp holds placeholders (its generator returned text only); call "
                "recompute_old_logp(model, batch) first: the clipped objective needs the sampler's log-probs"
            )
        self.life.hold(f"step {self.start_step + len(self.history) + 1}")  # Ctrl-C waits for the step
        mask = batch.completion_mask if mask is None else mask  # [B, T]
        totals = global_totals(mask, self.rollout_cfg.max_new_tokens)
        per_epoch: list[dict[str, float]] = []
        entropy = 0.0
        self.model.train()
        for epoch in range(mu):
            started = time.perf_counter()
            metrics = self._backward(
                batch, adv, loss, totals, mask, (ref_logp, weights), epoch == 0, backward_part
            )
            entropy = metrics.pop("train/entropy", entropy)
            stepping = time.perf_counter()
            self.phases["forward_backward"] += stepping - started
            step = optimizer_step(
                self.model, self.optimizer, self.scheduler, self.run_cfg, scaler=self.scaler
            )
            self.engine.stepped()
            per_epoch.append({**metrics, **step})
            self.heap()  # the optimizer's temporaries
            self.phases["optimizer"] += time.perf_counter() - stepping
        metrics = {key: float(np.mean([m[key] for m in per_epoch])) for key in per_epoch[0]}
        metrics["train/entropy"] = entropy
        every_adv = torch.cat(distributed.all_gather_objects(adv.detach().cpu(), self.info))  # [B_all]
        metrics.update(advantage_metrics(every_adv))
        return metrics

    def _backward(
        self,
        batch: Any,
        adv: Tensor,
        loss: PolicyLoss,
        totals: Any,
        mask: Tensor,
        extra: tuple[Tensor | None, Tensor | None],
        with_entropy: bool,
        backward_part: BackwardPart,
    ) -> dict[str, float]:
        """One forward and backward over ``batch`` in micro-batches, under autocast and DDP's all-reduce;
        every rank's loss metrics merged. ``extra``: the reference log-probs and correction weights, or None."""
        ref_logp, weights = extra
        with autocast_context(self.run_cfg), distributed.collective("update", self.info):
            metrics = accumulate_gradients(
                self.train_model or self.model,
                batch,
                adv,
                loss,
                totals,
                mask=mask,
                ref_logp=ref_logp,
                weights=weights,
                micro_batch_size=self.run_cfg.micro_batch_size,
                with_entropy=with_entropy,
                temperature=self.rollout_cfg.logprob_temperature,
                world_size=self.info.world_size,
                scaler=self.scaler,
                after_pass=self.heap,
                backward_part=backward_part,
            )
        return merge_rank_metrics(distributed.all_gather_objects(metrics, self.info))

    def evaluate(self, step: int) -> dict[str, float]:
        """Held-out greedy pass@1 (and ``eval_fn``); records and returns ``eval/`` metrics."""

        with self.engine.turn:  # an engine sampling ahead in a thread (vLLM, max_staleness >= 1) is lent
            self.phases["weight_sync"] += self.engine.ready()
            with sampling_context(self.engine, self.model, self.adapted, autocast_context(self.run_cfg)):
                accuracy = greedy_pass_at_1(
                    self.generator.inner,
                    self.env,
                    tokenizer=self.tokenizer,
                    split=self.eval_split,
                    num_problems=self.run_cfg.eval_problems,
                    difficulty=self.run_cfg.difficulty,
                    max_new_tokens=self.rollout_cfg.max_new_tokens,
                    distributed=self.info.world_size > 1,
                )
            self.engine.rest()
        metrics = {"eval/pass@1": accuracy}
        if self.eval_fn is not None and self.info.is_main:
            extra = self.eval_fn(self.model)
            metrics.update({(k if "/" in k else f"eval/{k}"): float(v) for k, v in extra.items()})
        self.model.train()
        self.evals.append({"step": float(step), **metrics})
        return metrics

    def finish_step(self, step: int, metrics: dict[str, float], batch: Any) -> None:
        """Add timings and warnings, evaluate, log, write samples, checkpoint and advance the bar."""
        self.life.hold(f"step {step}")
        run = self.run_cfg
        elapsed = time.perf_counter() - self.step_started
        # Housekeeping: what a step spends outside its phases (metrics, logging; an evaluation or a checkpoint
        # of this step is not in it), so that the phases add up to the step.
        self.phases["housekeeping"] = max(0.0, elapsed - sum(self.phases.values()))
        metrics.update({f"perf/{name}_s": seconds for name, seconds in self.phases.items()})
        metrics["perf/train_s"] = self.phases["forward_backward"] + self.phases["optimizer"]  # the update
        metrics["perf/step_s"] = elapsed
        if self.sampler is not None:  # the weights after this step (a skipped step's too: versions are steps)
            self.sampler.push(step)
            metrics.update(self.sampler.step_metrics(self.info))
        tokens = distributed.all_reduce_sum({"tokens": self.generated_tokens}, self.info)["tokens"]
        metrics["perf/tokens_per_s"] = tokens / max(elapsed, 1e-9)
        for message in (self.entropy.observe(metrics), self.zero_variance.observe(metrics)):
            if message is not None and self.info.is_main:
                warnings.warn(f"{self.algo}: {message}", RuntimeWarning, stacklevel=2)
        if run.eval_every and (step % run.eval_every == 0 or step == run.max_steps):
            metrics.update(self.evaluate(step))
        self.saved_cursor = self.cursor
        self.history.append(metrics)
        if step % run.log_every == 0 or step == run.max_steps:
            self.life.log(step, metrics)
        if batch is not None:
            self.life.write_samples(step, lambda: sample_rows(batch, self.rollout_cfg.group_size))
        if self.life.save_due(step):
            state = {"cursor": self.cursor, "initial_entropy": self.entropy.initial}
            model_state, optimizer_state = parallel.full_state(self.model, self.optimizer)  # FSDP: gathered
            self.life.save(
                step,
                model=self.adapted or self.model,
                optimizer=self.optimizer,
                scheduler=self.scheduler,
                trainer_state=state,
                model_state=model_state,
                optimizer_state=optimizer_state,
            )
        self.bar.update(1)
        self.bar.set_postfix(progress_postfix(metrics))
        self.life.release()  # a Ctrl-C held during the step stops the run here

    def close(self) -> None:
        """Close the bar and the env copies; then the run's life: its writers, the plot of its curves
        (``metrics.png``), and the run folder's lock."""
        try:
            if self.sampler is not None:
                self.sampler.close()
            if self.bar is not None:
                self.bar.close()
            if self.env_pool is not None:
                self.env_pool.close()
        finally:
            self.life.close(plot=bool(self.history or self.evals))

    def result(self) -> RLResult:
        """The ``RLResult`` of this call."""
        steps = self.start_step + len(self.history)
        return RLResult(steps, self.resumed_from, tuple(self.history), tuple(self.evals), self.life.path)
