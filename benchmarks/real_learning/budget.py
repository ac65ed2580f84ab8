"""An arm's budget of sampled completion tokens: counted on every sampling call or rollout batch, the half-way
evaluation at half of it, the stop at all of it; and `ArmRun`, what an arm's trainer is handed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.controls import RunVerdicts
from benchmarks.real_learning.setting import (
    Setting,
)
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.generation import SamplingParams


class BudgetSpent(Exception):
    """Raised by a STaR arm's sampler once the arm's tokens are spent; the model keeps what it learned."""


class Budget:
    """An arm's sampled completion tokens: counted, evaluated at the half-way mark, and stopped at the budget.

    `spent` runs before each RL step and before each STaR sampling call: an RL arm's step hook
    (`SessionBudget`, counting each rollout batch, whichever process sampled it) then stops the trainer, the
    STaR sampler (`budgeted`) raises `BudgetSpent`; either way the last update is finished.
    """

    def __init__(self, run: ArmRun) -> None:
        self.run, self.tokens, self.half_done = run, 0, False

    def check(self) -> None:
        """`spent`, raising `BudgetSpent` when it is (the STaR sampler's way to stop the run)."""
        if self.spent():
            raise BudgetSpent

    def spent(self) -> bool:
        """Print the recent training accuracy; evaluate once half is spent; whether all of it is."""
        budget, recent = self.run.setting.budget_tokens, self.run.verdicts.correct[-256:]
        if recent:  # per-batch progress: an arm takes minutes
            print(
                f"  tokens {self.tokens}/{budget}: train accuracy of the last {len(recent)} episodes "
                f"{np.mean(recent):.3f}",
                file=sys.stderr,
                flush=True,
            )
        if not self.half_done and self.tokens >= budget // 2:
            self.half_done = True
            self.run.on_half(self.tokens)
        return self.tokens >= budget


class BudgetedSampler:
    """Mixed into the sampler's own class by `budgeted`: its sampling calls check and count the `Budget`.

    A mixin rather than a wrapper: the trainer takes an `HFGenerator` on the policy's module at its word (its
    log-probs are the policy's), while any other object makes it rescore every batch, a forward pass more.
    """

    budget: Budget

    def generate_batch(self, prompts: Any, params: SamplingParams) -> Any:
        self.budget.check()
        batch = super().generate_batch(prompts, params)  # type: ignore[misc]
        self.budget.tokens += int(batch.completion_mask.sum())
        return batch

    def generate(self, prompts: Any, params: SamplingParams) -> Any:
        self.budget.check()
        groups = super().generate(prompts, params)  # type: ignore[misc]
        self.budget.tokens += sum(len(c.token_ids or ()) for group in groups for c in group)
        return groups


def budgeted(sampler: Any, budget: Budget) -> Any:
    """``sampler`` (an `HFGenerator` or a vLLM engine) with `BudgetedSampler` mixed into its class."""
    sampler.__class__ = type(f"Budgeted{type(sampler).__name__}", (BudgetedSampler, type(sampler)), {})
    sampler.budget = budget
    return sampler


class SessionBudget(StepHook):
    """A step hook: every RL step checks ``budget`` before it draws (a spent budget stops the trainer there) and
    counts the completion tokens of each batch it draws: the same stop whether this process samples (K = 0) or
    a sampler process draws ahead (``max_staleness`` >= 1, which takes no sampler passed in). With
    ``record``, the batch's real verdicts go to the run's log too (the sampler process steps its own copy
    of the environment, so a `RecordedVerdicts` wrapper here would see none)."""

    def __init__(self, budget: Budget, *, record: bool) -> None:
        self.budget, self.record = budget, record

    def before_sampling(self, view: StepView) -> bool:
        return self.budget.spent()

    def after_sampling(self, view: StepView, batch: Any) -> None:
        self.budget.tokens += int(batch.lengths.sum())
        if self.record:
            for correct, gradable in zip(batch.correct.tolist(), batch.gradable.tolist(), strict=True):
                if gradable:
                    self.budget.run.verdicts.record(bool(correct))


@dataclass
class ArmRun:
    """One (arm, seed) being trained: what its trainer function (`rl_arm`, `star_arm`, `sft_arm`) gets."""

    setting: Setting
    arm: str
    """``grpo``, ``grpo_shuffled``, ..., ``sft`` (`ARMS`)."""
    model: Any
    tokenizer: Any
    seed: int
    on_half: Callable[[int], None]
    """Called with the tokens sampled so far once half the budget is spent (the half-way evaluation)."""
    verdicts: RunVerdicts
    """The run's real verdicts, and its control's draws (`benchmarks/controls.py`)."""
    train_steps: list[dict[str, Any]] = field(default_factory=list)
    """An RL arm's logged steps (their ``train/`` metrics), for its record's clip fractions."""

    @property
    def shuffled(self) -> bool:
        """Whether this is a shuffled-reward control."""
        return self.arm.endswith("_shuffled")
