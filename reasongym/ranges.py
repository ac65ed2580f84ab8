"""The allowed range of every numeric field of every config, in one table, checked when a config is built.

A config is built from flags or a config file before any model loads, so a value no run can use (a weight
decay of 1e18, a NaN penalty, a problem count of 10**21) fails at once, naming the field, the value and its
range, instead of wrecking the weights silently or raising deep inside torch minutes later. NaN and
infinity are refused everywhere: no field here gives them a meaning (where "no bound" is meant, the field
takes None, and its docstring says so).

`FIELD_RANGES` maps ``"ConfigClass.field"`` to its `Range`; `check_ranges` checks a config's numeric fields
against it, and a numeric field missing from the table is a programming error (tests/test_ranges.py
walks every config). Rules that tie two fields together (``clip_min <= clip_max``) stay in the config's own
``__post_init__``.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from reasongym.errors import ConfigError

MAX_COUNT = 2**31 - 1
"""Largest count (steps, problems, batch sizes): torch and the tokenizers index with 32- or 64-bit integers,
and past 2**63 Python cannot hand a number to them at all (``eval --num-problems 10**21`` raised
OverflowError after the model loaded); a count past 2**31 - 1 is a typo on any machine."""
MAX_SEED = 2**32 - 1
"""Largest seed: NumPy's global seed (``np.random.seed``, which every trainer sets) takes ``[0, 2**32 - 1]``."""
MAX_SAMPLES = 1 << 20
"""Most completions of one problem or one training batch: all are held in memory until graded or trained."""
MAX_NEW_TOKENS = 1 << 20
"""Most tokens a completion may have; past this a buffer of ``max_new_tokens`` floats is the problem."""
MAX_LR = 1.0
"""Largest learning rate: AdamW moves every weight by about ``lr`` a step, so past 1 any model is destroyed
within a step (fine-tuning uses 1e-7 to 1e-4)."""
MAX_LORA_RANK = 1 << 16
"""Largest LoRA rank: no layer of a released model is wider than 65,536, and a rank above a layer's width
is no longer low-rank (ranks in use are 8 to 256)."""


@dataclass(frozen=True)
class Range:
    """An interval of allowed values, with what it protects."""

    low: float | None = None
    """Smallest value; None: unbounded below."""
    high: float | None = None
    """Largest value; None: any finite value."""
    low_open: bool = False
    """``low`` itself is not allowed."""
    high_open: bool = False
    """``high`` itself is not allowed."""
    why: str = ""
    """Why the bound is there, shown after the range."""
    high_text: str | None = None
    """How to write ``high`` in a message (``2**32 - 1 = 4294967295``); None: the number."""

    def allows(self, value: float) -> bool:
        """True when ``value`` is finite and inside the interval."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def describe(self, integer: bool, none: bool) -> str:
        """The range in words, e.g. ``an integer >= 1 or None (at most 2147483647)``."""
        kind = "an integer" if integer else "a float" if self.high is not None else "a finite float"
        high = self.high_text or ("" if self.high is None else _number(self.high))
        if self.low is not None and self.high is not None:
            bounds = (
                f"{'(' if self.low_open else '['}{_number(self.low)}, {high}{')' if self.high_open else ']'}"
            )
            text = f"{kind} in {bounds}"
            return text + (" or None" if none else "") + (f" ({self.why})" if self.why else "")
        text = kind
        if self.low is not None:
            text += f" {'>' if self.low_open else '>='} {_number(self.low)}"
        text += " or None" if none else ""
        notes = [f"at most {high}"] if self.high is not None else []
        notes += [self.why] if self.why else []
        return text + (f" ({'; '.join(notes)})" if notes else "")


def _number(value: float | None) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


_COUNT = Range(1, MAX_COUNT)
_COUNT0 = Range(0, MAX_COUNT, why="0: off")
_FRACTION_OPEN = Range(0, 1, low_open=True, high_open=True)
_PROBABILITY = Range(0, 1, low_open=True)
_LARGE = 1e6
"""Upper bound of a weight, ratio or penalty that has no natural one: far above any published value, and
below where float32 arithmetic on it loses the other terms of a loss."""
_WEIGHT = Range(0, _LARGE)
_POSITIVE = Range(0, _LARGE, low_open=True)
_SEED = Range(0, MAX_SEED, high_text=f"2**32 - 1 = {MAX_SEED}", why="NumPy's global seed")
_TOKENS = Range(1, MAX_NEW_TOKENS)
_TEMPERATURE = Range(0, 100, why="0 is greedy; at 100 sampling is close to uniform over the vocabulary")

FIELD_RANGES: dict[str, Range] = {
    # LoRA adapters (peft)
    "LoRAConfig.rank": Range(0, MAX_LORA_RANK, why="0: no adapters, every weight trains"),
    "LoRAConfig.alpha": Range(0, MAX_LORA_RANK, low_open=True, why="the scale is alpha / rank"),
    "LoRAConfig.dropout": Range(0, 1, high_open=True),
    # the run every trainer shares
    "RunConfig.max_steps": _COUNT,
    "RunConfig.lr": Range(
        0,
        MAX_LR,
        why="0 trains nothing; AdamW moves each weight by about lr a step, and fine-tuning uses 1e-7 to 1e-4",
    ),
    "RunConfig.warmup_steps": _COUNT0,
    "RunConfig.weight_decay": Range(
        0,
        1,
        why="AdamW multiplies each matrix by 1 - lr * weight_decay a step: "
        "common values are 0 to 0.1, and past 1 that factor can turn negative",
    ),
    "RunConfig.max_grad_norm": _POSITIVE,
    "RunConfig.micro_batch_size": _COUNT,
    "RunConfig.seed": _SEED,
    "RunConfig.difficulty": Range(1, MAX_COUNT),
    "RunConfig.eval_every": _COUNT0,
    "RunConfig.eval_problems": _COUNT,
    "RunConfig.save_every": _COUNT0,
    "RunConfig.keep_checkpoints": _COUNT,
    "RunConfig.log_every": _COUNT,
    "RunConfig.samples_every": _COUNT0,
    "RunConfig.entropy_collapse_ratio": Range(0, 1, high_open=True),
    # rollouts
    "RolloutConfig.num_prompts": Range(1, MAX_SAMPLES),
    "RolloutConfig.group_size": Range(1, MAX_SAMPLES),
    "RolloutConfig.max_new_tokens": _TOKENS,
    "RolloutConfig.temperature": _TEMPERATURE,
    "RolloutConfig.top_p": _PROBABILITY,
    "RolloutConfig.generation_batch_size": _COUNT,
    "RolloutConfig.max_staleness": Range(0, 1024, why="policy versions a batch may lag; 0 is synchronous"),
    # vLLM's share of the device
    "VLLMSettings.gpu_memory_utilization": _PROBABILITY,
    "VLLMSettings.kv_cache_gib": Range(0, 2**20, low_open=True, why="GiB; 2**20 is a PiB"),
    "VLLMSettings.max_model_len": Range(1, MAX_NEW_TOKENS * 2),
    # off-policy correction
    "ImportanceSamplingConfig.clip_max": _POSITIVE,
    "ImportanceSamplingConfig.clip_min": _POSITIVE,
    # on-policy distillation
    "DistillConfig.jsd_beta": Range(
        0,
        1,
        low_open=True,
        high_open=True,
        why="its ends are divergence='forward_kl' (0) and 'reverse_kl' (1)",
    ),
    "DistillConfig.reward_weight": _WEIGHT,
    # GRPO
    "GRPOConfig.clip_eps": _FRACTION_OPEN,
    "GRPOConfig.kl_coef": _WEIGHT,
    "GRPOConfig.mu": Range(1, 1024),
    "GRPOConfig.cispo_max_weight": Range(
        1, _LARGE, why="below 1 it would shrink the gradient of tokens the policy has not moved"
    ),
    # DAPO
    "DAPOConfig.eps_low": _FRACTION_OPEN,
    "DAPOConfig.eps_high": _POSITIVE,
    "DAPOConfig.mu": Range(1, 1024),
    "DAPOConfig.zero_variance_tolerance": Range(
        0, _LARGE, why="rewards spanning no more than this are one value"
    ),
    "DAPOConfig.max_extra_rounds": Range(0, 1024),
    "DAPOConfig.overlong_buffer": Range(0, MAX_NEW_TOKENS),
    "DAPOConfig.overlong_penalty": Range(0, _LARGE, why="the penalty at max_new_tokens; 0: off"),
    # STaR
    "STaRConfig.max_kept_per_problem": Range(1, MAX_SAMPLES),
    "STaRConfig.num_train_problems": _COUNT,
    "STaRConfig.train_start": Range(0, MAX_COUNT),
    "STaRConfig.few_shot_examples": Range(0, 1024),
    "STaRConfig.sft_steps": _COUNT,
    "STaRConfig.step_growth": Range(1, 100, why="1.2 = +20%/iteration"),
    "STaRConfig.patience": _COUNT,
    # SFT
    "SFTConfig.batch_size": Range(1, MAX_SAMPLES),
    "SFTConfig.max_length": Range(2, MAX_NEW_TOKENS * 2),
    "SFTConfig.stop_at_accuracy": Range(0, 1, low_open=True),
    "SFTConfig.eval_max_new_tokens": _TOKENS,
    # evaluation
    "EvalConfig.n": Range(1, MAX_SAMPLES),
    "EvalConfig.num_problems": _COUNT,
    "EvalConfig.difficulty": Range(1, MAX_COUNT),
    "EvalConfig.temperature": _TEMPERATURE,
    "EvalConfig.top_p": _PROBABILITY,
    "EvalConfig.max_new_tokens": _TOKENS,
    "EvalConfig.seed": _SEED,
    "EvalConfig.batch_size": _COUNT,
}
"""``"ConfigClass.field"`` -> its allowed `Range` (module docstring)."""


NESTED_PREFIX = {
    "LoRAConfig": "lora.",
    "VLLMSettings": "vllm.",
    "ImportanceSamplingConfig": "importance_sampling.",
}
"""How a config nested in another is named in messages, as its flags name it (``--lora.rank``)."""


def check_ranges(cfg: Any) -> None:
    """Raise ConfigError naming the first numeric field of ``cfg`` outside its range in `FIELD_RANGES`.

    None passes where the annotation allows it; booleans, strings and nested configs are left to their own
    checks.

    Raises:
        ConfigError: A value outside its range (NaN and infinity included), naming the field and the range.
        KeyError: A numeric field of ``cfg`` that has no range in the table (a programming error).
    """
    hints = typing.get_type_hints(type(cfg))
    for item in dataclasses.fields(cfg):
        numeric, none = _numeric(hints[item.name])
        if not numeric:
            continue
        value, prefix = getattr(cfg, item.name), NESTED_PREFIX.get(type(cfg).__name__, "")
        if value is None and none:
            continue
        allowed = FIELD_RANGES[f"{type(cfg).__name__}.{item.name}"]
        integer = int in typing.get_args(hints[item.name]) or hints[item.name] is int
        kind_ok = isinstance(value, int if integer else int | float) and not isinstance(value, bool)
        if not (kind_ok and allowed.allows(value)):
            raise ConfigError(
                f"{prefix}{item.name}={value!r} is not allowed; expected {allowed.describe(integer, none)}"
            )


def _numeric(tp: Any) -> tuple[bool, bool]:
    """(whether the annotation is int or float, possibly with None; whether it allows None)."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    none = type(None) in args
    rest = [arg for arg in args if arg is not type(None)]
    return len(rest) == 1 and rest[0] in (int, float), none
