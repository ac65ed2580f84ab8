"""One RL run in progress, shared by GRPO, DAPO and distillation: what a step needs of it (a batch, the
update, an evaluation, finishing the step).

The algorithm files keep their config, loss and the order of a step; the session does the rest, so that each
of them reads as "draw, score, advantages, update". It is typed on the shared configs only (`RunConfig`,
`RolloutConfig`); what differs between algorithms reaches it as arguments (the `PolicyLoss`, ``mu``, whether a
KL reference is needed, whether the old log-probs may come from the update's own forward pass).

Its parts each live in a module of their own: what trains the policy (`reasongym.agents.runtime.learner`),
the sampler and where its batches come from (a source given a frozen `DrawPlan`:
`reasongym.agents.runtime.sources`), the life of the run around its steps (folder, records, checkpoints and
resume, rank 0's writes, Ctrl-C and SIGTERM, the plot: `reasongym.runs.lifecycle.RunLife`), and the hooks
that see each step (`reasongym.agents.runtime.hooks`); `reasongym.agents.runtime.setup.start_session` builds
them. Held-out evaluation goes through `reasongym.evaluation.evaluate`, like ``reasongym eval``.

Under torch.distributed (`reasongym.distributed`) every rank runs the same session: the problem order is
global (one cursor, the same on every rank) and each rank draws its round-robin share of each batch's
prompts, whole groups, with a sampling seed derived from the seed and its rank. The loss normalisers are
summed over ranks and DDP averages the gradients, so N processes take the step one process would take on all
the data. Rank 0 alone writes; every rank resumes from the checkpoint rank 0 picks, and logged metrics cover
every rank.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from reasongym import distributed
from reasongym.agents.algorithm_configs import ImportanceSamplingConfig
from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.agents.runtime.diagnostics import StepClock, Timed, Watches, progress_postfix
from reasongym.agents.runtime.draw import DrawPlan
from reasongym.agents.runtime.engine import PolicySampler
from reasongym.agents.runtime.hooks import Hooks, StepView, UpdateInputs, frozen
from reasongym.agents.runtime.learner import Learner
from reasongym.agents.runtime.sources import BatchSource
from reasongym.agents.runtime.update import (
    BackwardPart,
    PolicyLoss,
    old_logp_from_update,
    policy_backward_part,
)
from reasongym.errors import TrainingInterrupted
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.rollouts.batch import RolloutBatch, sample_rows
from reasongym.rollouts.metrics import batch_rows, merge_rows, rollout_metrics
from reasongym.runs.lifecycle import RunLife

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

EvalFn = Callable[[torch.nn.Module], Mapping[str, float]]
"""An extra evaluation, called with the model whenever the built-in one runs: ``{name: value}``."""


@dataclass(frozen=True)
class RLResult:
    """What ``train_grpo`` / ``train_dapo`` / ``train_distill`` did."""

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
    """One RL run's parts (learner, sampler, source of batches, life, hooks), its progress and its records."""

    algo: str
    run_cfg: RunConfig
    rollout_cfg: RolloutConfig
    env: Any
    tokenizer: Any
    plan: DrawPlan
    """What the run's batches are drawn from, and the cursor and version it started at."""
    learner: Learner
    sampler: PolicySampler
    source: BatchSource
    life: RunLife
    eval_split: str
    watches: Watches
    hooks: Hooks = field(default_factory=Hooks)
    eval_fn: EvalFn | None = None
    """Extra evaluation called with the model whenever the built-in one runs (rank 0)."""
    old_logp_in_update: bool = False
    """A batch whose log-probs are not the policy's gets its old log-probs from the update's own forward pass
    (one update per batch, nothing reads them before), not from a scoring pass of its own."""
    cursor: int = 0
    """Position in the problem order of the next batch."""
    saved_cursor: int = 0
    """The cursor after the last finished step: what a checkpoint saved on interrupt records."""
    history: list[dict[str, float]] = field(default_factory=list)
    evals: list[dict[str, float]] = field(default_factory=list)
    clock: StepClock = field(default_factory=StepClock)
    bar: Any = None

    # ------------------------------------------------------------------------------------------ parts

    @property
    def model(self) -> torch.nn.Module:
        """The policy being trained."""
        return self.learner.model

    @property
    def info(self) -> distributed.DistInfo:
        """This process's place in the job; rank 0 alone writes."""
        return self.plan.place

    @property
    def start_step(self) -> int:
        """Steps done when this call started (the checkpoint's, on resume)."""
        return self.plan.version

    @property
    def resumed_from(self) -> int | None:
        """Step of the checkpoint this call resumed from, or None."""
        return self.plan.version or None

    @property
    def phases(self) -> dict[str, float]:
        """Seconds of the step so far, by phase."""
        return self.clock.phases

    def view(self, step: int, **parts: Any) -> StepView:
        """The hooks' read-only view of the run at ``step`` (``parts``: `StepView`'s optional fields)."""
        return StepView(
            self.algo,
            step,
            self.run_cfg.max_steps,
            self.run_cfg,
            self.rollout_cfg,
            self.plan.split,
            self.eval_split,
            self.model,
            self.clock.tokens,
            run_dir=self.life.path,
            **parts,
        )

    # ------------------------------------------------------------------------------------------ the loop

    def begin(self) -> None:
        """Evaluate the starting model on a fresh run (step 0)."""
        if self.run_cfg.eval_every and self.resumed_from is None:
            self.life.log(0, self.evaluate(0))

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
            self.clock.restart()
            yield step

    def stop_before(self, step: int) -> bool:
        """Whether a hook stops the run before ``step`` draws its batch."""
        return self.hooks.before_sampling(self.view(step))

    def interrupted(self) -> TrainingInterrupted:
        """After Ctrl-C or SIGTERM: save the last finished step (`RunLife.interrupted`), say where."""
        done = self.start_step + len(self.history)
        state = {"cursor": self.saved_cursor, "initial_entropy": self.watches.entropy.initial}
        save = functools.partial(self.learner.save, self.life, done, state, gathered=False)
        return self.life.interrupted(done, save=save)

    # ------------------------------------------------------------------------------------------ a step

    def rollouts(self) -> RolloutBatch:
        """This rank's share of the next batch: ``group_size`` completions for each of the next
        ``num_prompts`` problems (over every rank), scored (`reasongym.agents.runtime.sources`)."""
        drawn = self.source.next(self.start_step + len(self.history))  # the policy's version: steps done
        assert drawn.cursor == self.cursor, (drawn.cursor, self.cursor)  # a source draws the run's order
        self.cursor = self.plan.following(drawn.cursor)
        for name, seconds in drawn.phases.items():
            self.phases[name] += seconds
        batch = self._scored(drawn.batch)
        return self.hooks.after_sampling(self.view(self.start_step + len(self.history) + 1), batch)

    def _scored(self, batch: RolloutBatch) -> RolloutBatch:
        """``batch`` counted, and given the policy's old log-probs unless its sampler was the policy itself:
        by the update's forward pass (``old_logp_in_update``), or by a scoring pass now."""
        self.clock.tokens += int(batch.lengths.sum())
        if batch.old_logp_known and self.source.exact_logp:
            self.learner.heap()  # the sampler's KV caches and logits
            return batch
        if self.old_logp_in_update:  # the engine's own log-probs stay beside, for the off-policy correction
            self.learner.heap()
            return old_logp_from_update(batch)
        with Timed(self.phases, "old_logp"):
            return self.learner.rescore(batch)

    def rollout_metrics(self, *batches: RolloutBatch) -> dict[str, float]:
        """``rollout/`` and ``reward/<term>`` metrics of ``batches`` on every rank (`rollout_metrics`)."""
        per_rank = distributed.all_gather_objects(batch_rows(batches), self.info)
        return rollout_metrics(merge_rows(per_rank), self.rollout_cfg.group_size)

    def reference_logprobs(self, batch: RolloutBatch) -> Tensor | None:
        """[B, T] log-probs of the completions under the frozen reference, or None without one."""
        with Timed(self.phases, "reference"):
            return self.learner.reference_logprobs(batch)

    def update(
        self,
        batch: RolloutBatch,
        adv: Tensor,
        loss: PolicyLoss,
        *,
        mu: int,
        ref_logp: Tensor | None = None,
        mask: Tensor | None = None,
        correction: ImportanceSamplingConfig | None = None,
        backward_part: BackwardPart = policy_backward_part,
    ) -> dict[str, float]:
        """``mu`` optimizer steps over ``batch``, each accumulated over micro-batches; returns averaged metrics.

        Across processes ``batch`` is this rank's share (it may be empty while others have rows); the
        normalisers are the whole batch's, and the metrics cover every rank.

        Args:
            batch: The rollouts; ``adv``: their [B] advantages; ``loss``: the algorithm's loss, config bound.
            mu: Optimizer steps over the same rollouts (PPO epochs).
            ref_logp: [B, T] reference log-probs, or None; ``mask``: [B, T] loss mask (None: the batch's).
            correction: The off-policy correction of rows another engine sampled (``sampler_logp``), or None.
            backward_part: One micro-batch's forward and backward (distillation's needs the whole vocabulary).
        """
        self.life.hold(f"step {self.start_step + len(self.history) + 1}")  # Ctrl-C waits for the step
        used = batch.completion_mask if mask is None else mask  # [B, T]
        self.clock.update = UpdateInputs(batch, adv, used, ref_logp)
        return self.learner.update(
            batch,
            adv,
            loss,
            mu=mu,
            phases=self.phases,
            ref_logp=ref_logp,
            mask=used,
            correction=correction,
            backward_part=backward_part,
        )

    def evaluate(self, step: int) -> dict[str, float]:
        """Held-out greedy pass@1 (and ``eval_fn``); records and returns ``eval/`` metrics."""
        engine = self.sampler.engine
        with self.source.turn:  # an engine sampling ahead in a thread (vLLM, max_staleness >= 1) is lent
            self.phases["weight_sync"] += engine.ready()
            with self.sampler.context():
                accuracy = greedy_pass_at_1(
                    self.sampler.generator.inner,
                    self.env,
                    tokenizer=self.tokenizer,
                    split=self.eval_split,
                    num_problems=self.run_cfg.eval_problems,
                    difficulty=self.run_cfg.difficulty,
                    max_new_tokens=self.rollout_cfg.max_new_tokens,
                    distributed=self.info.world_size > 1,
                )
            engine.rest()
        metrics = {"eval/pass@1": accuracy}
        if self.eval_fn is not None and self.info.is_main:
            extra = self.eval_fn(self.model)
            metrics.update({(k if "/" in k else f"eval/{k}"): float(v) for k, v in extra.items()})
        self.model.train()
        self.evals.append({"step": float(step), **metrics})
        self.hooks.at_evaluation(self.view(step, metrics=frozen(metrics)))
        return metrics

    def finish_step(self, step: int, metrics: dict[str, float], batch: RolloutBatch | None) -> bool:
        """Add timings and warnings, evaluate, log, write samples, checkpoint and advance the bar; then the
        hooks see the finished step. Whether a hook stops the run after it."""
        self.life.hold(f"step {step}")
        run = self.run_cfg
        metrics.update(self.clock.perf_metrics())
        self.source.push(step)  # the weights after this step (a skipped step's too: versions are steps)
        metrics.update(self.source.step_metrics(self.info))
        tokens = distributed.all_reduce_sum({"tokens": self.clock.tokens}, self.info)["tokens"]
        metrics["perf/tokens_per_s"] = tokens / max(metrics["perf/step_s"], 1e-9)
        self.watches.observe(metrics, self.algo, warn=self.info.is_main)
        if run.eval_every and (step % run.eval_every == 0 or step == run.max_steps):
            metrics.update(self.evaluate(step))
        self.saved_cursor = self.cursor
        self.history.append(metrics)
        if step % run.log_every == 0 or step == run.max_steps:
            self.life.log(step, metrics)
        if batch is not None:
            self.life.write_samples(step, lambda: sample_rows(batch, self.rollout_cfg.group_size))
        if self.life.save_due(step):
            self.learner.save(
                self.life, step, {"cursor": self.cursor, "initial_entropy": self.watches.entropy.initial}
            )
        self.bar.update(1)
        self.bar.set_postfix(progress_postfix(metrics))
        self.life.release()  # a Ctrl-C held during the step stops the run here
        return self.hooks.after_update(self.view(step, metrics=frozen(metrics), update=self.clock.update))

    def end(self) -> None:
        """The run ended (its last step, or a hook stopped it): the hooks see it."""
        self.hooks.at_end(
            self.view(
                self.start_step + len(self.history), metrics=frozen(self.history[-1] if self.history else {})
            )
        )

    def close(self) -> None:
        """Stop the source and close the bar; then the run's life: its writers, the plot of its curves
        (``metrics.png``), and the run folder's lock."""
        try:
            self.source.close()
            if self.bar is not None:
                self.bar.close()
        finally:
            self.life.close(plot=bool(self.history or self.evals))

    def result(self) -> RLResult:
        """The ``RLResult`` of this call."""
        steps = self.start_step + len(self.history)
        return RLResult(steps, self.resumed_from, tuple(self.history), tuple(self.evals), self.life.path)
