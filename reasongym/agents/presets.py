"""Named settings for the trainers, in one table: what differs between a tiny CPU model and a real one.

- ``default``: a real pretrained model (0.1B-7B) on one machine; the values of the config classes, plus
  what each algorithm needs on top (SFT's higher learning rate and cosine schedule, STaR's greedy
  rationales, DAPO's group of 16, RL's gradient checkpointing and micro-batches of 2 rows).
- ``tiny``: the random-init 0.5M-parameter model over a character tokenizer (`reasongym.models.tiny_policy`)
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
from typing import Any

from reasongym.errors import ConfigError

SECTIONS: dict[str, tuple[str, ...]] = {
    "sft": ("run", "sft"),
    "grpo": ("run", "rollout", "grpo"),
    "dapo": ("run", "rollout", "dapo"),
    "star": ("run", "rollout", "star"),
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
        "grpo": {
            "run": {"max_steps": 60, "lr": 1e-4, "eval_problems": 64},
            "rollout": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 72},
            "grpo": {"kl": "off"},
        },
        "dapo": {
            "run": {"max_steps": 60, "lr": 1e-4, "eval_problems": 64},
            "rollout": {"num_prompts": 16, "group_size": 8, "max_new_tokens": 72},
            "dapo": {"overlong_buffer": 8, "max_extra_rounds": 2},
        },
        "star": {
            "run": {"max_steps": 3, "lr": 1e-3, "lr_schedule": "cosine", "eval_problems": 64},
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
    _check_name("preset", name, PRESETS)
    _check_name("algo", algo, SECTIONS)
    values = PRESETS[name].get(algo, {})
    return {section: _deep_copy(values.get(section, {})) for section in SECTIONS[algo]}


def preset_configs(
    name: str, algo: str, overrides: dict[str, dict[str, Any]] | None = None, **fields: Any
) -> dict[str, Any]:
    """The configs of ``algo`` under preset ``name``, with ``overrides`` and ``fields`` on top.

    Args:
        name: A preset name (``default``, ``tiny``, ``paper``).
        algo: ``sft``, ``grpo``, ``dapo`` or ``star``.
        overrides: Section -> field -> value, e.g. ``{"run": {"max_steps": 10}}``.
        **fields: Field values by name alone (names are unique across an algorithm's sections), e.g.
            ``preset_configs("tiny", "grpo", max_steps=10, group_size=4, kl="off")``.

    Returns:
        Section name -> config object, e.g. ``{"run": RunConfig, "rollout": RolloutConfig, "grpo": GRPOConfig}``.

    Raises:
        ConfigError: An unknown preset, algorithm, section or field, or a value a config refuses.
    """
    values = preset_values(name, algo)
    for layer in (overrides or {}, sort_fields(algo, fields, where="fields")):
        for section, section_fields in layer.items():
            _check_name("section", section, values)
            values[section] = _merge(values[section], section_fields)
    return {
        section: build(config_class(algo, section), fields, where=section)
        for section, fields in values.items()
    }


def sort_fields(algo: str, values: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """Values by section: section tables (``{"run": {...}}``) as they are, flat field names to their section.

    Raises:
        ConfigError: A name that is neither a section nor a field of the algorithm's configs.
    """
    _check_name("algo", algo, SECTIONS)
    owner = {
        item.name: section
        for section in SECTIONS[algo]
        for item in dataclasses.fields(config_class(algo, section))
    }
    sections: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        if key in SECTIONS[algo] and isinstance(value, dict):
            sections[key] = _merge(sections.get(key, {}), value)
        elif key in owner:
            sections.setdefault(owner[key], {})[key] = value
        else:
            close = difflib.get_close_matches(key, [*SECTIONS[algo], *owner], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{where}: unknown field {key!r} for {algo}{hint}; sections: {list(SECTIONS[algo])}, each with "
                "the fields `reasongym train ALGO --help` lists"
            )
    return sections


def config_class(algo: str, section: str) -> type:
    """The config class of a section: ``RunConfig``, ``RolloutConfig``, or the algorithm's own."""
    from reasongym.agents import dapo, grpo, sft, star
    from reasongym.agents.config import RolloutConfig, RunConfig

    own = {"sft": sft.SFTConfig, "grpo": grpo.GRPOConfig, "dapo": dapo.DAPOConfig, "star": star.STaRConfig}
    return {"run": RunConfig, "rollout": RolloutConfig}.get(section) or own[algo]


def build(cls: type, values: dict[str, Any], where: str) -> Any:
    """An instance of the config dataclass ``cls`` from (nested) ``values``; unknown names name the nearest.

    Lists become tuples where the field is a tuple, and nested dataclass fields are built from mappings.

    Raises:
        ConfigError: An unknown field, or a value the config refuses.
    """
    import typing

    hints = typing.get_type_hints(cls)
    names = [item.name for item in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown field {key!r} of {cls.__name__}{hint}; fields: {names}")
        tp = hints[key]
        if dataclasses.is_dataclass(tp) and isinstance(value, dict):
            value = build(tp, value, where=f"{where}.{key}")
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    return cls(**kwargs)


def _check_name(what: str, name: str, known: Any) -> None:
    if name not in known:
        close = difflib.get_close_matches(str(name), list(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{what}={name!r} is not allowed; choose one of {sorted(known)}{hint}")


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _deep_copy(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _deep_copy(value) if isinstance(value, dict) else value for key, value in values.items()}
