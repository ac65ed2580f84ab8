"""The algorithms' own configs (GRPO, DAPO, STaR, SFT, on-policy distillation, and the off-policy correction GRPO and DAPO share).

They live apart from their algorithms, in a module that imports no torch, so that building a config (the
command line's flags, ``--help``, a usage error, a config file) answers before torch loads: about 2 s instead
of 10-27 s on a loaded 2-core machine. Each algorithm file (`reasongym.agents.grpo`, ...) imports its config
from here and documents it from its top; a config's named choices are checked against the open registries of
`reasongym.agents.registries` (policy losses, advantage estimators, divergences) or the closed lists of
`reasongym.agents.choices`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import get_args

from reasongym.agents.choices import CorrectionName, KLPlacement, LossAggregationName, check_choice
from reasongym.agents.config import check_field_types
from reasongym.agents.registries import ADVANTAGE_ESTIMATORS, DIVERGENCES, POLICY_LOSSES
from reasongym.errors import ConfigError


@dataclass(frozen=True)
class ImportanceSamplingConfig:
    """How the trainer corrects for a sampler whose log-probs differ from its own (TRL's
    ``vllm_importance_sampling_*`` settings, by the same names)."""

    mode: CorrectionName = "sequence_mask"
    """The correction (`IMPORTANCE_SAMPLING_CORRECTIONS`): ``token_truncate``, ``token_mask``,
    ``sequence_truncate``, ``sequence_mask`` (TRL's default) or ``off``. Applies only when the sampler is not
    the trainer's own module (``--engine vllm``, a served model); the in-process sampler needs none."""
    clip_max: float | None = 3.0
    """C_max: ``*_truncate`` clamps rho from above here, ``*_mask`` drops rho above it (TRL's default 3.0);
    None: no upper bound."""
    clip_min: float | None = None
    """C_min: ``*_truncate`` clamps rho from below here, ``*_mask`` drops rho below it; None: no lower bound
    (TRL's default)."""

    def __post_init__(self) -> None:
        check_field_types(self)
        check_choice(self.mode, "importance_sampling.mode", get_args(CorrectionName))
        if self.clip_min is not None and self.clip_max is not None and self.clip_min > self.clip_max:
            raise ConfigError(
                f"importance_sampling.clip_min={self.clip_min!r} is above clip_max={self.clip_max!r}; "
                "expected clip_min <= clip_max (the band rho is kept in)"
            )

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)``: the band with None as 0 and infinity."""
        low = 0.0 if self.clip_min is None else self.clip_min
        return low, math.inf if self.clip_max is None else self.clip_max


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO's own mathematics; the shared settings are `RunConfig` and `RolloutConfig`.

    Defaults follow DeepSeekMath Sec. 4.2 unless a comment says otherwise.
    """

    clip_eps: float = 0.2
    """epsilon of the clipped ratio, both sides (PPO's 0.2, which DeepSeekMath's Eq. 3 inherits)."""
    kl: KLPlacement = "k3_loss"
    """Where the KL to the frozen reference goes: ``off``, ``k3_loss`` (DeepSeekMath Eq. 4, in the loss)
    or ``k1_reward`` (log-ratio subtracted from each sequence's reward). A reference is built only if not off."""
    kl_coef: float = 0.04
    """beta, the KL weight (DeepSeekMath Sec. 4.2: 0.04)."""
    mu: int = 1
    """Optimizer steps per rollout batch, each over all of it (DeepSeekMath Sec. 4.2: a single update)."""
    advantage_normalization: str = "group_std"
    """The advantage estimator: ``group_std`` (DeepSeekMath Sec. 4.1.2), ``batch_std``, ``none`` (Dr. GRPO),
    ``rloo`` (leave-one-out baseline), ``reinforce_plus_plus`` (batch whitening, no group baseline),
    ``reinforce_plus_plus_baseline`` (group mean, then batch whitening; see `reasongym.agents.advantages`), or
    one registered with ``register_advantage_estimator``."""
    loss_aggregation: LossAggregationName = "seq_mean_token_mean"
    """``seq_mean_token_mean`` (DeepSeekMath Eq. 3: 1/G sum_i 1/|o_i| sum_t), ``token_mean`` (DAPO) or
    ``constant`` (Dr. GRPO: token sum divided by B * max_new_tokens)."""
    policy_loss: str = "ppo_clip"
    """The surrogate: ``ppo_clip`` (DeepSeekMath Eq. 3: each token's ratio clipped by ``clip_eps``),
    ``gspo`` / ``gspo_token`` (one length-normalised ratio per sequence, clipped by ``gspo_clip``), ``cispo``
    (each token's ratio capped at ``cispo_max_weight`` and detached: no token loses its gradient), or one
    registered with ``register_policy_loss``."""
    gspo_clip: tuple[float, float] = (3e-4, 4e-4)
    """GSPO's (left, right) clip of the sequence ratio, ``[1 - left, 1 + right]`` (GSPO Sec. 5.1: 3e-4 and
    4e-4; a geometric mean of token ratios moves far less than one token's ratio)."""
    cispo_max_weight: float = 5.0
    """CISPO's cap on the importance weight, ``1 + eps_high`` of MiniMax-M1 Eq. 5 (no lower cap, as there);
    5.0 is ScaleRL's value, TRL's recommended ``epsilon_high`` for ``loss_type="cispo"``."""
    mask_truncated_completions: bool = False
    """Leave completions cut at ``max_new_tokens`` out of the loss (TRL's option; DAPO Sec. 3.4 calls it
    overlong filtering): their reward says nothing about a finished answer. Their advantages still count."""
    importance_sampling: ImportanceSamplingConfig = dataclasses.field(
        default_factory=ImportanceSamplingConfig
    )
    """Correction for a sampler whose log-probs are not the trainer's (``--engine vllm``, a served model):
    truncated or masked importance sampling per token or sequence (`reasongym.agents.offpolicy`)."""

    @property
    def clip_range(self) -> tuple[float, float]:
        """``ppo_clip``'s bounds of the token ratio: ``(1 - clip_eps, 1 + clip_eps)``."""
        return 1 - self.clip_eps, 1 + self.clip_eps

    def __post_init__(self) -> None:
        check_field_types(self)
        ADVANTAGE_ESTIMATORS.check(self.advantage_normalization)
        check_choice(self.loss_aggregation, "loss_aggregation", get_args(LossAggregationName))
        check_choice(self.kl, "kl", get_args(KLPlacement))
        POLICY_LOSSES.check(self.policy_loss)
        if not all(0 < eps < 1 for eps in self.gspo_clip) or len(self.gspo_clip) != 2:
            raise ConfigError(
                f"gspo_clip={self.gspo_clip!r} is not allowed; expected (left, right), each in (0, 1)"
            )


@dataclass(frozen=True)
class DAPOConfig:
    """DAPO's own mathematics; the shared settings are `RunConfig` and `RolloutConfig`.

    Defaults follow the DAPO paper (Sec. 4.1) unless a comment says otherwise.
    """

    eps_low: float = 0.2
    """Lower clip: the ratio of a negative-advantage token is clipped below ``1 - eps_low`` (paper: 0.2)."""
    eps_high: float = 0.28
    """Upper clip: the ratio of a positive-advantage token is clipped above ``1 + eps_high`` (paper: 0.28)."""
    mu: int = 1
    """Optimizer steps per batch, each over all of it (the paper takes 16 mini-batch steps per rollout batch)."""
    dynamic_sampling: bool = True
    """Drop zero-variance groups and sample again until ``num_prompts`` groups are kept (paper Sec. 3.2)."""
    zero_variance_tolerance: float = 1e-6
    """Groups whose rewards span no more than this count as zero variance (so continuous rewards work)."""
    accuracy_band: tuple[float, float] | None = None
    """Also keep only groups whose accuracy lies in [lo, hi]; None: no band (the paper's rule is 0 < acc < 1)."""
    max_extra_rounds: int = 4
    """Most extra generation rounds per batch; then the partial batch trains and the shortfall is logged."""
    overlong_buffer: int | None = None
    """L_cache, the tokens before ``max_new_tokens`` over which the penalty grows; 0: off; None:
    ``min(4096, max_new_tokens // 5)`` (the paper's 4,096 of L_max = 20,480; see `overlong_buffer_tokens`)."""
    overlong_penalty: float = 1.0
    """Penalty at ``max_new_tokens`` (paper Eq. 13 reaches -1 at L_max)."""
    overlong_filtering: bool = False
    """Mask truncated completions out of the loss (paper Sec. 3.4 overlong filtering; off in its final recipe,
    which uses the soft punishment instead)."""
    advantage_normalization: str = "group_std"
    """The advantage estimator of the kept groups (the paper's is ``group_std``; `GRPOConfig` lists the
    others). Dynamic sampling filters on task rewards before it, whichever it is."""
    importance_sampling: ImportanceSamplingConfig = dataclasses.field(
        default_factory=ImportanceSamplingConfig
    )
    """Correction for a sampler whose log-probs are not the trainer's (``--engine vllm``, a served model):
    truncated or masked importance sampling per token or sequence (`reasongym.agents.offpolicy`)."""

    @property
    def clip_range(self) -> tuple[float, float]:
        """The named policy loss ``ppo_clip``'s bounds of the token ratio, clip-higher:
        ``(1 - eps_low, 1 + eps_high)``."""
        return 1 - self.eps_low, 1 + self.eps_high

    def __post_init__(self) -> None:
        check_field_types(self)
        ADVANTAGE_ESTIMATORS.check(self.advantage_normalization)
        band = self.accuracy_band
        if band is not None and not (len(band) == 2 and 0.0 <= band[0] <= band[1] <= 1.0):
            raise ConfigError(
                f"accuracy_band={band!r} is not allowed; expected (lo, hi) with 0 <= lo <= hi <= 1"
            )


@dataclass(frozen=True)
class SFTConfig:
    """SFT's own settings; the optimizer, length and cadence are `RunConfig`'s (``lr``, ``lr_schedule``,
    ``warmup_steps``, ``weight_decay``, ``max_grad_norm``, ``max_steps``, ``micro_batch_size`` ...)."""

    batch_size: int = 8
    """Sequences (packed rows with ``packing``) per optimizer step, per process; ``RunConfig``'s
    ``micro_batch_size`` splits them into micro-batches whose accumulated gradient is the same."""
    max_length: int = 1024
    """Longest sequence (prompt + completion + EOS) in tokens; longer ones are cut at the end."""
    packing: bool = False
    """Concatenate examples into rows of ``max_length``; attention stays within each example through
    restarting position ids (transformers' packed-sequence masks, transformers >= 4.54)."""
    stop_at_accuracy: float | None = None
    """Stop once held-out greedy pass@1 reaches this (needs the environment: ``train_sft(..., env=)``, which
    the command line passes; measured every ``eval_every`` steps). RL needs a policy that sometimes earns a
    reward and room to improve, so a warm start stops here rather than at a step count. None: never."""
    eval_max_new_tokens: int = 512
    """Longest completion of the held-out evaluations (with an environment)."""

    def __post_init__(self) -> None:
        check_field_types(self)


@dataclass(frozen=True)
class STaRConfig:
    """STaR's own settings; defaults follow the paper where it states a value.

    The shared configs carry the rest: `RunConfig` (``max_steps`` outer iterations, the fine-tuning
    optimizer ``lr``/``lr_schedule``/``warmup_steps``, ``split`` and ``eval_split``, ``eval_problems``,
    ``difficulty``, ``seed``) and `RolloutConfig` (``group_size`` rationales per problem, ``temperature``,
    ``top_p``, ``max_new_tokens``; ``num_prompts`` is not used: see ``num_train_problems``).
    """

    rationalize: bool = True
    """Retry missed problems with the gold answer as a hint and keep verified rationales. Paper: on."""
    max_kept_per_problem: int = 1
    """Distinct verified rationales kept per problem and source (direct or rationalized)."""
    drop_hint_mentions: bool = True
    """Drop rationalized completions that mention the word "hint": stored without the hint they
    would refer to something the prompt no longer shows."""
    faithful_rationalization: bool = False
    """Keep a rationalized example only if its reasoning stands on its own: shown the rationale without the
    hint and without its final answer, the policy (greedy) writes a correct answer (`rationales.stands_alone`).
    Off by default, as in the paper; benchmarks/README.md (the study) measures what it changes."""
    num_train_problems: int | None = None
    """Training problems per iteration (the same ones every iteration, as in the paper, which uses the
    whole training set); None: every problem of the training split (finite splits only)."""
    train_start: int = 0
    """Index of the first training problem; the few-shot examples come from the indices before it."""
    few_shot_examples: int = 0
    """Worked examples (reference solutions of training problems ``0 .. train_start - 1``) shown before
    each question when generating; hinted prompts show hinted examples. 0: zero-shot through the chat
    template, the natural choice for instruction-tuned models (the paper gives GPT-J, a base model, 10 for
    CommonsenseQA). Fine-tuning and evaluation prompts are always zero-shot."""
    sft_steps: int = 40
    """Fine-tuning steps of iteration 1 (paper: 40 steps of batch 8); later iterations grow them by
    ``step_growth``. The optimizer is the run's (``lr``: paper 1e-6)."""
    step_growth: float = 1.2
    """Factor by which fine-tuning steps grow per iteration. Paper: about 20% (1.2)."""
    restart_from_base: bool = True
    """Fine-tune every iteration from the original base weights (paper), not from the last model."""
    patience: int | None = None
    """Stop after this many iterations without a new best held-out accuracy; None runs them all."""
    sft: SFTConfig = SFTConfig(batch_size=8)
    """Batch, length and packing of the fine-tuning (paper: batch 8)."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        check_field_types(self)
        if self.few_shot_examples > self.train_start:
            raise ConfigError(
                f"few_shot_examples={self.few_shot_examples} is not allowed with train_start={self.train_start}; "
                "few-shot examples come from the problems before train_start, so set "
                f"train_start >= {self.few_shot_examples}"
            )


@dataclass(frozen=True)
class DistillConfig:
    """On-policy distillation's own mathematics (Agarwal et al., 2024, GKD, arXiv:2306.13649): the student samples,
    the teacher scores each sampled position, the student moves toward the teacher there. The shared settings
    are `RunConfig` and `RolloutConfig`; the teacher itself is an argument of `train_distill` (``--teacher``)."""

    divergence: str = "reverse_kl"
    """What the student minimises at each position of its own samples: ``reverse_kl`` KL(student || teacher)
    (mode-seeking, the usual on-policy choice), ``forward_kl`` KL(teacher || student) (mass-covering),
    ``jsd`` GKD's generalized Jensen-Shannon divergence with ``jsd_beta``, each exact over the vocabulary
    (a local teacher); or ``sampled_reverse_kl``, the reverse KL estimated from the sampled token alone (a
    teacher that gives log-probs of given tokens only, such as a served model), as a per-token policy gradient;
    or one registered with ``register_divergence``."""
    jsd_beta: float = 0.5
    """beta of ``jsd``: the mixture is ``beta * teacher + (1 - beta) * student`` (GKD's and TRL's convention);
    in (0, 1). Its ends are the two KLs: ``forward_kl`` is beta -> 0, ``reverse_kl`` beta -> 1 (TRL's
    ``GKDConfig.beta`` 0 and 1)."""
    reward_weight: float = 0.0
    """Weight of the verifier's signal added to the divergence: a policy-gradient term with GRPO's
    group-relative advantages (needs ``group_size`` >= 2 to be non-zero); 0: the teacher alone."""

    def __post_init__(self) -> None:
        check_field_types(self)
        DIVERGENCES.check(self.divergence)
