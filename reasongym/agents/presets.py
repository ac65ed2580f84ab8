"""Named settings for the trainers, in one table: what differs between a tiny CPU model and a real one.

- ``default``: a real pretrained model (0.1B-7B) on one machine; the values of the config classes, plus
  what each algorithm needs on top (SFT's higher learning rate and cosine schedule, STaR's greedy
  rationales, DAPO's group of 16, RL's gradient checkpointing and micro-batches of 2 rows).
- ``tiny``: the random-init 0.5M-parameter model over a character tokenizer (`reasongym.policy.tiny.tiny_policy`)
  on a CPU, on the easiest level of the arithmetic generators. Found by trying on a 2-core machine: SFT
  learns the column-by-column format in a few hundred steps at lr 2e-3; GRPO/DAPO then learn from the
  verifier alone at lr 1e-4 (2e-4 stalled, 3e-4 collapsed the policy), 16 prompts x 8 samples, 72 tokens.
- ``paper``: the papers' full-scale settings (DeepSeekMath Sec. 4.2, DAPO Sec. 4.1, STaR Sec. 3), for
  reference and for machines that can afford them.

A preset lists, per algorithm and config section (``run``, ``rollout``, and the algorithm's own), only the
values that differ from the config classes' defaults. `preset_configs` builds the configs; the command
line starts from a preset (``--preset``, ``tiny`` for ``--model tiny``) and applies a config file and flags
on top, and the run folder records which preset it used.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

from reasongym.agents.config import RolloutConfig, RunConfig, build
from reasongym.errors import ConfigError

SECTIONS: dict[str, tuple[str, ...]] = {
    "sft": ("run", "sft"),
    "grpo": ("run", "rollout", "grpo"),
    "dapo": ("run", "rollout", "dapo"),
    "star": ("run", "rollout", "star"),
    "distill": ("run", "rollout", "distill"),
}
"""The config sections of each algorithm, in the order a trainer takes them."""

PRESETS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "default": {
        # SFT moves further from the base model than RL does: TRL's SFT default lr is 2e-5, ours 1e-5.
        "sft": {"run": {"max_steps": 1000, "lr": 1e-5, "lr_schedule": "cosine"}},
        # RL keeps every sampled row of a batch for its update: a real model's activations are what bound
        # memory. Gradient checkpointing (TRL's GRPOConfig turns it on by default too) and micro-batches of
        # 2 rows keep SmolLM2-135M's GRPO step at 4 x 4 x 64 tokens under 4 GB (full fine-tuning) and 1.5 GB
        # (LoRA) instead of 6-7 GB (benchmarks/README.md); the gradient is the same, the step ~20% slower.
        "grpo": {"run": {"gradient_checkpointing": True, "micro_batch_size": 2}},
        # Distillation holds the student's and the teacher's log-probs over the whole vocabulary at each
        # sampled position of a micro-batch: small micro-batches bound that memory.
        "distill": {"run": {"gradient_checkpointing": True, "micro_batch_size": 2}},
        "dapo": {
            "run": {"gradient_checkpointing": True, "micro_batch_size": 2},
            "rollout": {"group_size": 16, "max_new_tokens": 4096},
        },
        # STaR: greedy rationales (paper Sec. 3: higher temperatures gave more right answers from wrong
        # reasoning), 10 iterations, 200 held-out problems, cosine fine-tuning from the base each time.
        "star": {
            "run": {"max_steps": 10, "eval_problems": 200, "lr_schedule": "cosine"},
            "rollout": {"group_size": 1, "temperature": 0.0, "max_new_tokens": 256},
        },
    },
    "tiny": {
        # SFT stops once greedy pass@1 on 64 validation problems reaches 0.4: accuracy jumps once the format
        # is learnt (3% after 120 steps, 88% after 300), and RL needs room to improve (the demo aims at
        # 25-50%); run to the end, SFT leaves GRPO at lr 1e-4 nothing to gain in 60 steps.
        "sft": {
            "run": {
                "max_steps": 800,
                "lr": 2e-3,
                "lr_schedule": "cosine",
                "warmup_steps": 20,
                "eval_every": 10,
                "eval_problems": 64,
                "eval_split": "validation",
            },
            "sft": {"batch_size": 32, "max_length": 256, "stop_at_accuracy": 0.4, "eval_max_new_tokens": 72},
        },
        # RL and STaR measure on the validation split, as the SFT warm start before them does: the same weights
        # then give the same held-out number at the end of SFT and at step 0 of RL.
        "grpo": {
            "run": {"max_steps": 60, "lr": 1e-4, "eval_problems": 64, "eval_split": "validation"},
            "rollout": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 72},
            "grpo": {"kl": "off"},
        },
        "dapo": {
            "run": {"max_steps": 60, "lr": 1e-4, "eval_problems": 64, "eval_split": "validation"},
            "rollout": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 72},
            "dapo": {"overlong_buffer": 8, "max_extra_rounds": 2},
        },
        # Distillation needs no group to compare within: one sample per prompt, more prompts.
        "distill": {
            "run": {"max_steps": 60, "lr": 1e-4, "eval_problems": 64, "eval_split": "validation"},
            "rollout": {"num_prompts": 32, "group_size": 1, "max_new_tokens": 72},
        },
        "star": {
            "run": {
                "max_steps": 3,
                "lr": 1e-3,
                "lr_schedule": "cosine",
                "eval_problems": 64,
                "eval_split": "validation",
            },
            "rollout": {"group_size": 1, "temperature": 0.0, "max_new_tokens": 72},
            "star": {
                "num_train_problems": 128,
                "sft_steps": 60,
                "sft": {"batch_size": 16, "max_length": 256},
            },
        },
    },
    "paper": {
        "sft": {"run": {"max_steps": 1000, "lr": 1e-5, "lr_schedule": "cosine"}},
        # DeepSeekMath Sec. 4.2: lr 1e-6, KL 0.04, 64 outputs per question, max length 1024, batch 1024.
        "grpo": {"rollout": {"num_prompts": 1024, "group_size": 64, "max_new_tokens": 1024}},
        # DAPO Sec. 4.1: lr 1e-6 after 20 warmup steps, 512 prompts x 16, 16,384 + 4,096 tokens.
        "dapo": {
            "run": {"warmup_steps": 20},
            "rollout": {"num_prompts": 512, "group_size": 16, "max_new_tokens": 20480},
            "dapo": {"overlong_buffer": 4096},
        },
        # STaR Sec. 3: greedy decoding, 40 steps of batch 8 at 1e-6, +20% steps per iteration.
        "star": {
            "run": {"max_steps": 10, "eval_problems": 200},
            "rollout": {"group_size": 1, "temperature": 0.0, "max_new_tokens": 256},
        },
    },
}
"""Preset name -> algorithm -> config section -> the values that differ from the class defaults."""


def preset_values(name: str, algo: str) -> dict[str, dict[str, Any]]:
    """The values a preset sets for ``algo``, by section (a fresh copy the caller may change).

    Raises:
        ConfigError: An unknown preset or algorithm, naming the nearest one.
    """
    check_name("preset", name, PRESETS)
    check_name("algo", algo, SECTIONS)
    values = PRESETS[name].get(algo, {})
    return {section: _deep_copy(values.get(section, {})) for section in SECTIONS[algo]}


def shared_configs(name: str, algo: str, **fields: Any) -> dict[str, Any]:
    """The shared configs of ``algo`` under preset ``name``: ``run`` (`RunConfig`) and, for the algorithms
    that sample, ``rollout`` (`RolloutConfig`), with ``fields`` (names of those two classes) on top.

    What a trainer called from Python without ``run=`` or ``rollout=`` uses (the ``default`` preset), so
    that it trains exactly as ``reasongym train ALGO`` does with the same model and environment.

    Raises:
        ConfigError: An unknown preset, algorithm or field, or a value a config refuses.
    """
    values = preset_values(name, algo)
    classes = {"run": RunConfig, "rollout": RolloutConfig}
    owner = {item.name: section for section, cls in classes.items() for item in dataclasses.fields(cls)}
    for key, value in fields.items():
        if owner.get(key) not in values:
            close = difflib.get_close_matches(key, list(owner), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown field {key!r} of {algo}'s run and rollout configs{hint}")
        values[owner[key]][key] = value
    return {
        section: build(classes[section], values[section], where=section)
        for section in classes
        if section in values
    }


def check_name(what: str, name: str, known: Any) -> None:
    if name not in known:
        close = difflib.get_close_matches(str(name), list(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{what}={name!r} is not allowed; choose one of {sorted(known)}{hint}")


def merge_values(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``, recursing into mappings (a preset under a file under flags)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = value
    return merged


def _deep_copy(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _deep_copy(value) if isinstance(value, dict) else value for key, value in values.items()}
