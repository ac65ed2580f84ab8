"""The study's task and sizes, its arms (each one named change against its baseline) and the groups
``--quick``, ``--family``, ``--tempered`` and ``--async`` run, `StudySetting` and the dry pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import settings

ENV = "reasongym/Arithmetic-v0"
DIFFICULTY = 1
"""Level 1: 2-digit addition, column by column; the tiny model learns it from a few hundred SFT steps."""
MAX_NEW_TOKENS = 72
"""The ``tiny`` preset's completion length."""
CURVE = (0.25, 0.5, 0.75, 1.0)
"""Fractions of the budget at which held-out accuracy is measured (0 is the warm start)."""
WARM_PAIRS = 4_000
"""Reference solutions of the warm start (problems 0 .. 3,999), plus the first quarter again with the hint."""
SFT_GOLD_START = WARM_PAIRS
"""First training problem of the SFT reference: the warm start used the ones before."""
STAR_TRAIN_START = 20_000
"""First training problem of STaR (after the SFT reference's)."""


@dataclass(frozen=True)
class Arm:
    """One row of the table."""

    kind: str
    """``rl`` (GRPO or DAPO), ``star`` or ``sft``."""
    algo: str
    """``grpo``, ``dapo``, ``star`` or ``sft``: the preset section."""
    baseline: str | None
    """The arm its paired difference is taken against (same seed, same warm start); None: the warm start."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Config fields on top of the ``tiny`` preset."""
    patch: str | None = None
    """A change the configs cannot express: ``shuffled`` rewards (`controls.RecordedVerdicts`), or DAPO's
    ``sample_level`` loss."""


ARMS: dict[str, Arm] = {
    "sft_gold": Arm("sft", "sft", None),
    "grpo": Arm("rl", "grpo", None),
    "dr_grpo": Arm("rl", "grpo", "grpo", {"advantage_normalization": "none", "loss_aggregation": "constant"}),
    "shuffled_reward": Arm("rl", "grpo", "grpo", patch="shuffled"),
    "dapo": Arm("rl", "dapo", "grpo"),
    "dapo_no_clip_higher": Arm("rl", "dapo", "dapo", {"eps_high": 0.2}),
    "dapo_no_dynamic_sampling": Arm("rl", "dapo", "dapo", {"dynamic_sampling": False}),
    "dapo_no_token_level_loss": Arm("rl", "dapo", "dapo", patch="sample_level"),
    "dapo_no_overlong_shaping": Arm("rl", "dapo", "dapo", {"overlong_buffer": 0}),
    # The policy-gradient family (issue 25): one named choice changed against GRPO. The advantage
    # estimators need no clipping to act (mu = 1, as GRPO); GSPO and CISPO change what the clip does, which
    # with mu = 1 never acts (the ratio is exactly 1), so they run with 4 updates per batch against GRPO
    # with the same 4.
    "rloo": Arm("rl", "grpo", "grpo", {"advantage_normalization": "rloo"}),
    "reinforce_plus_plus": Arm("rl", "grpo", "grpo", {"advantage_normalization": "reinforce_plus_plus"}),
    "reinforce_plus_plus_baseline": Arm(
        "rl", "grpo", "grpo", {"advantage_normalization": "reinforce_plus_plus_baseline"}
    ),
    "grpo_mu4": Arm("rl", "grpo", "grpo", {"mu": 4}),
    "gspo_mu4": Arm("rl", "grpo", "grpo_mu4", {"mu": 4, "policy_loss": "gspo"}),
    "cispo_mu4": Arm("rl", "grpo", "grpo_mu4", {"mu": 4, "policy_loss": "cispo"}),
    # Issue 42: the loss at the sampling temperature (T = 0.7) or at 1 (the raw model, as before), with
    # mu = 4 so that the clip acts and its fractions say something.
    "grpo_mu4_t07": Arm("rl", "grpo", None, {"mu": 4, "temperature": 0.7}),
    "grpo_mu4_t07_untempered": Arm(
        "rl", "grpo", "grpo_mu4_t07", {"mu": 4, "temperature": 0.7, "tempered_logprobs": False}
    ),
    # Issue 38: the same GRPO with its batches drawn by a sampler process at most one version behind.
    "grpo_async": Arm("rl", "grpo", "grpo", {"max_staleness": 1}),
    "star_filter": Arm("star", "star", None, {"rationalize": False}),
    "star_rationalize": Arm("star", "star", "star_filter", {"rationalize": True}),
    "star_rationalize_faithful": Arm(
        "star", "star", "star_filter", {"rationalize": True, "faithful_rationalization": True}
    ),
}
"""Every arm, in table order."""
QUICK_ARMS = ("grpo", "dapo", "shuffled_reward")
TEMPERED_ARMS = ("grpo_mu4_t07", "grpo_mu4_t07_untempered")
ASYNC_ARMS = ("grpo", "grpo_async")
FAMILY_ARMS = (
    "grpo",
    "rloo",
    "reinforce_plus_plus",
    "reinforce_plus_plus_baseline",
    "grpo_mu4",
    "gspo_mu4",
    "cispo_mu4",
)
STAR_FIELDS = {
    "num_train_problems": 256,
    "train_start": STAR_TRAIN_START,
    "group_size": 4,
    "temperature": 0.5,
}
"""STaR samples 4 rationales at T = 0.5 for 256 problems per iteration (the tiny preset's greedy single
rationale for 128 problems would need some 20 iterations, with fine-tuning growing 20% each, to spend the
budget): about 70k tokens per iteration."""


@dataclass(frozen=True)
class StudySetting:
    """The study's sizes: each a flag (``--budget-tokens 600000``); ``--dry`` shrinks them to seconds."""

    budget_tokens: int = 200_000
    """Sampled completion tokens per arm (the SFT reference: gold tokens trained on)."""
    eval_problems: int = 200
    """Held-out test problems per evaluation (greedy pass@1)."""
    warm_max_steps: int | None = None
    """The warm start's SFT steps at most (None: the tiny preset's, stopped by its 40% probe)."""

    def record(self) -> dict[str, Any]:
        """What a result line keeps, and what a rerun must match to skip it (`_load`)."""
        kept = {"budget_tokens": self.budget_tokens, "eval_problems": self.eval_problems}
        return kept if self.warm_max_steps is None else {**kept, "warm_max_steps": self.warm_max_steps}


def dry(setting: StudySetting) -> StudySetting:
    """``setting`` shrunk to seconds: one short RL step per arm, a two-step warm start, 4 held-out problems."""
    return settings.dry(setting, {"budget_tokens": 64, "eval_problems": 4, "warm_max_steps": 2})
