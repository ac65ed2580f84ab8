"""What people debug an RL run by, every step: advantage statistics, the progress bar's short form, and
the warning when most groups teach nothing.

A group whose samples all get the same reward has advantage 0 under every estimator with a per-prompt
baseline (GRPO, Dr. GRPO, RLOO, REINFORCE++-baseline): it costs its sampling and moves nothing. A few
such groups are normal; most of them, step after step, mean the problems are too easy (every sample
right) or too hard (none right), and the fix differs, so `ZeroVarianceWatch` says which. The shares come
from `reasongym.rollouts.metrics.rollout_metrics` (``rollout/zero_std_group_frac``,
``rollout/all_correct_group_frac``, ``rollout/all_wrong_group_frac``).
"""

from __future__ import annotations

import math
import time
import warnings
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

ZERO_VARIANCE_SHARE = 0.5
"""Most groups: a step counts towards the warning when more than this share has zero reward variance."""
ZERO_VARIANCE_STEPS = 10
"""Many steps: the warning comes after this many such steps in a row."""


def advantage_metrics(adv: Tensor) -> dict[str, float]:
    """``train/advantage_mean`` and ``train/advantage_std`` (population std) of a batch's [B] advantages."""
    adv = adv.detach().float()  # [B]
    if adv.numel() == 0:
        return {"train/advantage_mean": math.nan, "train/advantage_std": math.nan}
    return {
        "train/advantage_mean": float(adv.mean()),
        "train/advantage_std": float(adv.std(correction=0)),
    }


def progress_postfix(metrics: Mapping[str, float]) -> dict[str, str]:
    """The progress bar's short form: reward, accuracy, share of zero-variance groups, clipped tokens, speed."""
    clipped = metrics.get("train/clip_low_frac", 0.0) + metrics.get("train/clip_high_frac", 0.0)
    return {
        "reward": f"{metrics.get('rollout/reward_mean', math.nan):.3f}",
        "acc": f"{metrics.get('rollout/correct_rate', math.nan):.3f}",
        "zero_var": f"{metrics.get('rollout/zero_std_group_frac', math.nan):.2f}",
        "clip": f"{clipped:.3f}",
        "tok_s": f"{metrics.get('perf/tokens_per_s', math.nan):.0f}",
    }


@dataclass
class ZeroVarianceWatch:
    """Counts the steps in a row where most groups had zero reward variance; warns once after enough."""

    share: float = ZERO_VARIANCE_SHARE
    """A step counts when its ``rollout/zero_std_group_frac`` is above this."""
    steps: int = ZERO_VARIANCE_STEPS
    """Steps in a row before the warning."""
    streak: int = 0
    """Counting steps so far in a row."""
    sums: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    """Zero-variance, all-correct and all-wrong shares summed over the streak."""
    warned: bool = False
    """The warning was given (once per run)."""

    def observe(self, metrics: Mapping[str, float]) -> str | None:
        """Take one step's metrics; return the warning's text the first time the streak is long enough."""
        names = ("zero_std", "all_correct", "all_wrong")
        shares = [metrics.get(f"rollout/{name}_group_frac", math.nan) for name in names]
        if not math.isfinite(shares[0]) or shares[0] <= self.share:
            self.streak, self.sums = 0, [0.0, 0.0, 0.0]
            return None
        self.streak += 1
        self.sums = [
            total + (s if math.isfinite(s) else 0.0) for total, s in zip(self.sums, shares, strict=True)
        ]
        if self.warned or self.streak < self.steps:
            return None
        self.warned = True
        zero, right, wrong = (total / self.streak for total in self.sums)
        return zero_variance_message(zero, right, wrong, self.streak)


@dataclass
class EntropyWatch:
    """Marks each step whose policy entropy fell below a share of the run's first value; warns once."""

    ratio: float = 0.1
    """A step's entropy below ``ratio`` times the first counts as collapsed (``RunConfig.entropy_collapse_ratio``)."""
    initial: float | None = None
    """The run's first finite entropy (a resumed run keeps its start's, from the checkpoint)."""
    warned: bool = False
    """The warning was given (once per run)."""

    def observe(self, metrics: dict[str, float]) -> str | None:
        """Add ``train/entropy_collapsed`` to a step's metrics; return the warning's text the first time."""
        entropy = metrics.get("train/entropy")
        if entropy is None or not math.isfinite(entropy):
            return None
        if self.initial is None:
            self.initial = entropy
        collapsed = entropy < self.ratio * self.initial
        metrics["train/entropy_collapsed"] = float(collapsed)
        if not collapsed or self.warned:
            return None
        self.warned = True
        return (
            f"policy entropy {entropy:.4f} fell below {self.ratio} x its first value {self.initial:.4f} (entropy "
            "collapse: exploration is dying; consider clip-higher, a lower lr or a higher temperature)"
        )


@dataclass
class Watches:
    """The run's two warnings, each given once: entropy collapse and most groups teaching nothing."""

    entropy: EntropyWatch
    zero_variance: ZeroVarianceWatch = field(default_factory=ZeroVarianceWatch)

    def observe(self, metrics: dict[str, float], algo: str, *, warn: bool) -> None:
        """Take a step's metrics (``train/entropy_collapsed`` is added); warn, as ``algo``, when ``warn``."""
        for message in (self.entropy.observe(metrics), self.zero_variance.observe(metrics)):
            if message is not None and warn:
                warnings.warn(f"{algo}: {message}", RuntimeWarning, stacklevel=3)


@dataclass
class StepClock:
    """Where a step's time goes, by phase, and what it sampled; reset at the start of every step."""

    started: float = 0.0
    """``time.perf_counter()`` at the step's start."""
    phases: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    """Seconds by phase (``generate``, ``verify``, ``old_logp``, ``reference``, ``forward_backward``, ...)."""
    tokens: int = 0
    """Completion tokens this rank sampled in the step."""
    update: Any = None
    """What the step's update trained on (`reasongym.agents.runtime.hooks.UpdateInputs`), once it ran."""

    def restart(self) -> None:
        """A new step begins."""
        self.started, self.tokens, self.update = time.perf_counter(), 0, None
        self.phases.clear()

    def perf_metrics(self) -> dict[str, float]:
        """``perf/<phase>_s``, ``perf/train_s`` (the update) and ``perf/step_s`` so far; housekeeping, what the
        step spent outside its phases (metrics, logging; not an evaluation or a checkpoint of this step), is
        the rest, so that the phases add up to the step."""
        elapsed = time.perf_counter() - self.started
        self.phases["housekeeping"] = max(0.0, elapsed - sum(self.phases.values()))
        metrics = {f"perf/{name}_s": seconds for name, seconds in self.phases.items()}
        metrics["perf/train_s"] = self.phases["forward_backward"] + self.phases["optimizer"]
        metrics["perf/step_s"] = elapsed
        return metrics


class Timed:
    """Adds the seconds spent inside it to ``phases[name]``."""

    def __init__(self, phases: dict[str, float], name: str) -> None:
        self.phases, self.name = phases, name

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.phases[self.name] += time.perf_counter() - self.started


def zero_variance_message(zero: float, right: float, wrong: float, steps: int) -> str:
    """Why most groups teach nothing and what to change: too easy (all right), too hard (all wrong), or neither."""
    head = (
        f"on average {zero:.0%} of the groups had the same reward for every sample over the last {steps} steps "
        f"(all right: {right:.0%}, all wrong: {wrong:.0%}); under a group baseline such a group has advantage 0 "
        "and teaches nothing. "
    )
    if right >= wrong and right >= zero / 2:
        return head + (
            "The problems are too easy for the model: raise --difficulty, train on harder problems (another "
            "split or environment), or stop here; more samples per group (--group-size) find the rare miss."
        )
    if wrong > right and wrong >= zero / 2:
        return head + (
            "The problems are too hard for the model: lower --difficulty, warm-start it with SFT first "
            "(`reasongym train sft`), sample more per problem (--group-size) or at a higher --temperature, "
            "and check in samples.jsonl that its answers are extracted at all (an unparsed format is wrong "
            "every time)."
        )
    return head + (
        "Most of these groups are neither all right nor all wrong: the reward does not tell the samples apart "
        "(check the environment's reward shaping, or a tolerance that makes different rewards equal)."
    )
