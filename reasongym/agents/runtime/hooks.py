"""Step hooks: what a benchmark, a test or a user registers to see a run's steps, or to stop the run.

A trainer (``train_grpo``, ``train_dapo``, ``train_distill``; ``hooks=[...]``) calls each hook at five points
of its step loop, in the order the hooks were given, with a read-only `StepView` of the step:

- ``before_sampling(view)``: a step is about to draw its batch (once a step, before its first round);
  returning True stops the run here, before the step: the steps already done stay done (logged and
  checkpointed as ``save_every`` says) and the trainer returns its result as at the end;
- ``after_sampling(view, batch)``: a batch was drawn and scored (DAPO: each round). May return a batch for the
  step to use instead, with the same rows (a test that sets the rewards, a reward shaped afterwards); None
  keeps it;
- ``after_update(view)``: a step is finished: updated, evaluated when due, logged, checkpointed; its metrics
  are ``view.metrics``. Returning True stops the run after it;
- ``at_evaluation(view)``: a held-out evaluation ran (step 0's before training too); ``view.metrics`` holds
  its ``eval/`` metrics;
- ``at_end(view)``: the run ended (its last step, or a hook stopped it), before its files are closed. Not
  called when it fails or is interrupted.

What a hook may do: read anything the view shows; run ``view.model`` without gradients (an evaluation: the
trainer puts it back in training mode before it updates); return a replacement batch from
``after_sampling``; return True to stop. What it may not: change the model's weights, the optimizer, the
configs or the run folder, or keep the view's tensors and change them later. A hook that raises fails the
run as any error in a step would.

`StepHook` is the base class (every method does nothing); Gymnasium's wrappers are the model for batches a
hook hands back, TRL's callbacks for the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch
from torch import Tensor

from reasongym.agents.config import RolloutConfig, RunConfig
from reasongym.rollouts.batch import RolloutBatch


@dataclass(frozen=True)
class UpdateInputs:
    """What the step's update trained on (the trainer's own tensors: read them, never change them)."""

    batch: RolloutBatch
    """This rank's rollouts, with the old log-probs the ratio used (when known before the update)."""
    adv: Tensor
    """[B] each row's advantage."""
    mask: Tensor
    """[B, T] the loss mask (ungradable and, when asked, truncated rows zeroed)."""
    ref_logp: Tensor | None
    """[B, T] the reference's log-probs, or None without a KL reference (or the teacher's, distillation)."""


@dataclass(frozen=True)
class StepView:
    """A read-only view of a run at one of its hook points."""

    algo: str
    """``grpo``, ``dapo`` or ``distill``."""
    step: int
    """The step about to run or just finished (1-based); 0 before training."""
    max_steps: int
    """Where the run ends unless a hook stops it."""
    run: RunConfig
    rollout: RolloutConfig
    train_split: str
    eval_split: str
    model: torch.nn.Module
    """The policy: to read or to evaluate without gradients, never to change."""
    sampled_tokens: int = 0
    """Completion tokens this rank sampled in the step so far."""
    metrics: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """The finished step's metrics (``after_update``), or the evaluation's (``at_evaluation``)."""
    update: UpdateInputs | None = None
    """What the step's update trained on (``after_update``; None when the step skipped its update)."""
    run_dir: Path | None = None
    """The run folder, if there is one."""


class StepHook:
    """A step hook: override the points you need (see the module's docstring for what a hook may change)."""

    def before_sampling(self, view: StepView) -> bool:
        """A step is about to draw its batch; True stops the run here."""
        return False

    def after_sampling(self, view: StepView, batch: RolloutBatch) -> RolloutBatch | None:
        """A batch was drawn; a batch to use instead, or None to keep it."""
        return None

    def after_update(self, view: StepView) -> bool:
        """A step is finished (``view.metrics``); True stops the run after it."""
        return False

    def at_evaluation(self, view: StepView) -> None:
        """An evaluation ran (``view.metrics``: its ``eval/`` metrics)."""

    def at_end(self, view: StepView) -> None:
        """The run ended normally or a hook stopped it."""


class Hooks:
    """A run's hooks, called in order."""

    def __init__(self, hooks: Iterable[StepHook] = ()) -> None:
        self.hooks = list(hooks)
        for hook in self.hooks:
            if not isinstance(hook, StepHook):
                raise TypeError(f"hooks must be StepHook instances; got {type(hook).__name__}: {hook!r:.80}")

    def before_sampling(self, view: StepView) -> bool:
        """Every hook's ``before_sampling``; True when one asks to stop (the rest are still called)."""
        return any([hook.before_sampling(view) for hook in self.hooks])

    def after_sampling(self, view: StepView, batch: RolloutBatch) -> RolloutBatch:
        """``batch`` through every hook's ``after_sampling`` in turn (each may hand back another)."""
        for hook in self.hooks:
            batch = hook.after_sampling(view, batch) or batch
        return batch

    def after_update(self, view: StepView) -> bool:
        """Every hook's ``after_update``; True when one asks to stop."""
        return any([hook.after_update(view) for hook in self.hooks])

    def at_evaluation(self, view: StepView) -> None:
        """Every hook's ``at_evaluation``."""
        for hook in self.hooks:
            hook.at_evaluation(view)

    def at_end(self, view: StepView) -> None:
        """Every hook's ``at_end``."""
        for hook in self.hooks:
            hook.at_end(view)


def frozen(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of ``metrics`` for a view."""
    return MappingProxyType(dict(metrics))
