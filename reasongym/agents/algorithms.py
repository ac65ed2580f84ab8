"""Every algorithm by name: its config classes, its trainer, and its configs under a preset.

The one module that imports every trainer, so that the presets (values only, `reasongym.agents.presets`)
and the trainers (which fall back on the ``default`` preset's shared configs) import nothing of each other.
The command line builds its configs here, and so can a script:

    >>> from reasongym.agents import preset_configs
    >>> preset_configs("tiny", "grpo", max_steps=20)["rollout"].group_size
    8
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reasongym.agents.algorithm_configs import (
    DAPOConfig,
    DistillConfig,
    GRPOConfig,
    SFTConfig,
    STaRConfig,
)
from reasongym.agents.config import RolloutConfig, RunConfig, build
from reasongym.agents.presets import SECTIONS, check_name, merge_values, preset_values
from reasongym.errors import ConfigError


@dataclass(frozen=True)
class Algorithm:
    """A trainer and the config class of its own mathematics."""

    config: type
    """The algorithm's own config class (`GRPOConfig`, ...)."""
    trainer: str
    """Where its ``train_*`` function is, ``module:function``: imported on first use, since the trainers
    import torch and building a config (flags, ``--help``) must not."""

    @property
    def train(self) -> Callable[..., Any]:
        """The ``train_*`` function."""
        module, _, function = self.trainer.partition(":")
        return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


ALGORITHMS: dict[str, Algorithm] = {
    "sft": Algorithm(SFTConfig, "reasongym.agents.sft:train_sft"),
    "grpo": Algorithm(GRPOConfig, "reasongym.agents.grpo:train_grpo"),
    "dapo": Algorithm(DAPOConfig, "reasongym.agents.dapo:train_dapo"),
    "star": Algorithm(STaRConfig, "reasongym.agents.star:train_star"),
    "distill": Algorithm(DistillConfig, "reasongym.agents.distill:train_distill"),
}
"""Algorithm name -> its config class and trainer."""


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
            check_name("section", section, values)
            values[section] = merge_values(values[section], section_fields)
    return {
        section: build(config_class(algo, section), fields, where=section)
        for section, fields in values.items()
    }


TRL_NAMES: dict[str, tuple[str, ...]] = {
    "lr": ("learning_rate",),
    "lr_schedule": ("lr_scheduler_type",),
    "log_every": ("logging_steps",),
    "save_every": ("save_steps",),
    "eval_every": ("eval_steps",),
    "group_size": ("num_generations",),
    "max_new_tokens": ("max_completion_length",),
    "kl_coef": ("beta",),
    "clip_eps": ("epsilon",),
    "eps_low": ("epsilon",),
    "eps_high": ("epsilon_high",),
    "mu": ("num_iterations",),
}
"""Our field -> the names TRL's configs (``GRPOConfig``, ``SFTConfig``, ``TrainingArguments``) give the same
setting: accepted for it as a flag (``--learning-rate``) and in a config file (``learning_rate = 1e-5``)."""


def trl_names(algo: str) -> dict[str, tuple[str, ...]]:
    """`TRL_NAMES` for ``algo``, with SFT's per-process batch under TRL's name."""
    if algo == "sft":
        return {**TRL_NAMES, "batch_size": ("per_device_train_batch_size",)}
    return dict(TRL_NAMES)


def sort_fields(algo: str, values: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """Values by section: section tables (``{"run": {...}}``) as they are, flat field names to their section;
    TRL's names of a field (`TRL_NAMES`) stand for it.

    Raises:
        ConfigError: A name that is neither a section nor a field of the algorithm's configs.
    """
    check_name("algo", algo, SECTIONS)
    owner = {
        item.name: section
        for section in SECTIONS[algo]
        for item in dataclasses.fields(config_class(algo, section))
    }
    theirs = {name: ours for ours, names in trl_names(algo).items() if ours in owner for name in names}
    sections: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        key = theirs.get(name, name)
        if key in SECTIONS[algo] and isinstance(value, dict):
            inner = {theirs.get(field, field): item for field, item in value.items()}
            sections[key] = merge_values(sections.get(key, {}), inner)
        elif key in owner:
            sections.setdefault(owner[key], {})[key] = value
        else:
            close = difflib.get_close_matches(key, [*SECTIONS[algo], *owner, *theirs], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{where}: unknown field {key!r} for {algo}{hint}; sections: {list(SECTIONS[algo])}, each with "
                "the fields `reasongym train ALGO --help` lists"
            )
    return sections


def config_class(algo: str, section: str) -> type:
    """The config class of a section: ``RunConfig``, ``RolloutConfig``, or the algorithm's own."""
    check_name("algo", algo, ALGORITHMS)
    return {"run": RunConfig, "rollout": RolloutConfig}.get(section) or ALGORITHMS[algo].config
