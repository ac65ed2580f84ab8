"""Whether an RL run can learn at all: a group whose samples all earn the same reward has advantage 0 for each
of them, and a batch of such groups has a policy gradient of exactly 0.

`ZeroSignalWatch` reads ``rollout/zero_std_group_frac`` (the share of groups without reward variance,
`reasongym.rollouts.batch.rollout_metrics`) step by step and warns once when it has been 1 for
`ZERO_SIGNAL_STEPS` steps in a row (DAPO: also a batch whose groups were all filtered out), saying whether the
problems are too hard, too easy, or each one all-or-nothing, and what to change.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

ZERO_SIGNAL_STEPS = 10
"""Steps in a row without any group with reward variance before the warning."""


@dataclass
class ZeroSignalWatch:
    """Counts the steps in a row in which no group had reward variance; warns once."""

    steps: int = 0
    """Steps in a row without reward variance in any group."""
    warned: bool = False
    """Whether the warning was given."""

    def observe(self, metrics: Mapping[str, float], algo: str) -> None:
        """Count this step's metrics; at `ZERO_SIGNAL_STEPS` steps in a row, warn (RuntimeWarning) once."""
        flat = metrics.get("rollout/zero_std_group_frac", 0.0) >= 1.0 or bool(
            metrics.get("train/skipped_empty")
        )
        self.steps = self.steps + 1 if flat else 0
        if self.steps < ZERO_SIGNAL_STEPS or self.warned:
            return
        self.warned = True
        warnings.warn(
            f"{algo}: no group has had any reward variance for {self.steps} steps "
            "(rollout/zero_std_group_frac = 1), so every advantage and the policy gradient are 0 and nothing is "
            f"learnt: {advice(metrics.get('rollout/correct_rate', math.nan))}",
            RuntimeWarning,
            stacklevel=3,
        )


def advice(correct_rate: float) -> str:
    """Why no group varies, from the share of correct samples, and what to change."""
    if correct_rate == 0:
        return (
            "every sample is wrong: the problems are too hard for this model; start from a model that sometimes "
            "solves them (a warm start: `reasongym train sft`, then --model RUN), or lower --difficulty"
        )
    if correct_rate == 1:
        return "every sample is right: the problems are too easy; raise --difficulty"
    return "each problem is all right or all wrong; raise --group-size or --temperature"
