"""What the study measures with: held-out accuracy at points of the budget (`Meter`), the token budget of
an RL arm (`TokenBudget`, a step hook), DAPO's loss at the sample level, and STaR's sampled tokens."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import torch

from benchmarks.study.setting import (
    CURVE,
    DIFFICULTY,
    ENV,
    MAX_NEW_TOKENS,
)
from reasongym.agents.common import masked_sum
from reasongym.agents.runtime.hooks import StepHook, StepView
from reasongym.agents.runtime.update import check_loss_shapes, ratio_metrics
from reasongym.evaluation.runner import greedy_pass_at_1
from reasongym.generation import HFGenerator


@dataclass
class Meter:
    """Held-out accuracy at points of the budget, and the CPU- and wall seconds spent outside those
    evaluations."""

    tokenizer: Any
    eval_problems: int
    curve: list[dict[str, float]] = field(default_factory=list)
    eval_cpu_s: float = 0.0
    eval_wall_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    """The arm's start (``time.perf_counter``): each point's wall seconds count from here."""

    def evaluate(self, model: torch.nn.Module) -> float:
        """Greedy pass@1 on the first ``eval_problems`` test problems (its CPU and wall time kept apart)."""
        started, wall = time.process_time(), time.perf_counter()
        accuracy = greedy_pass_at_1(
            HFGenerator(model, self.tokenizer),
            ENV,
            tokenizer=self.tokenizer,
            split="test",
            num_problems=self.eval_problems,
            difficulty=DIFFICULTY,
            max_new_tokens=MAX_NEW_TOKENS,
        )
        self.eval_cpu_s += time.process_time() - started
        self.eval_wall_s += time.perf_counter() - wall
        return accuracy

    def point(self, model: torch.nn.Module, tokens: float) -> None:
        """Record held-out accuracy after ``tokens``, and the wall seconds at which these weights were reached
        (earlier evaluations included, and without them)."""
        wall_s = time.perf_counter() - self.started
        point = {"tokens": float(tokens), "wall_s": wall_s, "train_wall_s": wall_s - self.eval_wall_s}
        self.curve.append({**point, "accuracy": self.evaluate(model)})


class TokenBudget(StepHook):
    """A step hook: the RL trainer stops after the step whose rollouts bring the completion tokens it sampled
    to ``budget``, and the meter records held-out accuracy each time the running total passes the next point
    of ``CURVE``."""

    def __init__(self, budget: int, meter: Meter) -> None:
        self.budget, self.meter, self.tokens, self.steps = budget, meter, 0, 0
        self.points = [fraction * budget for fraction in CURVE]

    def after_update(self, view: StepView) -> bool:
        self.tokens += view.sampled_tokens
        self.steps += 1
        while self.points and self.tokens >= self.points[0]:
            self.points.pop(0)
            self.meter.point(view.model, self.tokens)
        return self.tokens >= self.budget


class SampleLevelLoss(AbstractContextManager["SampleLevelLoss"]):
    """While active, DAPO's loss averages each sequence's tokens first, then the sequences (GRPO's sample-level
    aggregation, DeepSeekMath Eq. 3), instead of weighing every token of the batch the same (DAPO Sec. 3.3):
    the one DAPO technique its config cannot switch off."""

    def __enter__(self) -> SampleLevelLoss:
        import reasongym.agents.dapo as dapo

        self.module, self.original = dapo, dapo.dapo_loss
        dapo.dapo_loss = sample_level_dapo_loss
        return self

    def __exit__(self, *exc: object) -> None:
        self.module.dapo_loss = self.original


def sample_level_dapo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    adv: torch.Tensor,
    mask: torch.Tensor,
    totals: Any = None,
    *,
    cfg: Any,
) -> tuple[torch.Tensor, dict[str, float]]:
    """DAPO's clip-higher surrogate, aggregated per sequence then over the batch's sequences."""
    check_loss_shapes(logp, old_logp, None, adv, mask)
    mask = mask.to(logp.dtype)  # [B, T]
    sequences = totals.sequences if totals is not None else logp.shape[0]
    adv = adv.to(logp.dtype)[:, None]  # [B, 1]
    ratio = torch.exp(logp - old_logp)  # [B, T]
    surrogate = torch.min(ratio * adv, ratio.clamp(1 - cfg.eps_low, 1 + cfg.eps_high) * adv)  # [B, T]
    per_sequence = masked_sum(-surrogate, mask, dim=1) / mask.sum(dim=1).clamp(min=1)  # [B]
    loss = per_sequence.sum() / sequences  # []
    metrics = ratio_metrics(ratio, logp, old_logp, adv, mask, 1 - cfg.eps_low, 1 + cfg.eps_high)
    metrics["loss/policy"] = float(loss.detach())
    return loss, metrics


class CountingGenerator:
    """Wraps the STaR sampler and adds up the completion tokens it samples while ``counting`` (the training
    steps: generate, filter, rationalize with its faithfulness check), not during held-out evaluation."""

    def __init__(self, inner: HFGenerator) -> None:
        self.inner, self.tokens, self.counting = inner, 0, False

    def generate(self, prompts: list[str], params: Any) -> list[list[Any]]:
        groups = self.inner.generate(prompts, params)
        if self.counting:
            self.tokens += sum(len(c.token_ids or ()) for group in groups for c in group)
        return groups

    def generate_batch(self, prompts: list[str], params: Any) -> Any:
        batch = self.inner.generate_batch(prompts, params)
        if self.counting:
            self.tokens += int(batch.completion_mask.sum())
        return batch
