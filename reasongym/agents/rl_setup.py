"""Checks and preparation shared by the GRPO and DAPO configs and sessions: field validation, splits, dropout.

Kept apart from `reasongym.agents.runtime.session` so that the loop reads as the loop.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

import torch

from reasongym.errors import ConfigError


def check_common_fields(cfg: Any) -> None:
    """Raise ConfigError naming the first shared field of an RL config whose value is not allowed."""
    positive = (
        "max_steps",
        "num_prompts",
        "group_size",
        "max_new_tokens",
        "mu",
        "eval_problems",
        "keep_checkpoints",
    )
    for name in positive:
        if getattr(cfg, name) < 1:
            raise ConfigError(f"{name}={getattr(cfg, name)!r} is not allowed; expected an integer >= 1")
    for name in ("eval_every", "save_every", "samples_every"):
        if getattr(cfg, name) < 0:
            raise ConfigError(
                f"{name}={getattr(cfg, name)!r} is not allowed; expected an integer >= 0 (0: off)"
            )
    if cfg.micro_batch_size is not None and cfg.micro_batch_size < 1:
        raise ConfigError(f"micro_batch_size={cfg.micro_batch_size!r} is not allowed; expected >= 1 or None")
    if not (cfg.lr >= 0 and math.isfinite(cfg.lr)):
        raise ConfigError(f"lr={cfg.lr!r} is not allowed; expected a finite float >= 0 (0 trains nothing)")
    if cfg.temperature <= 0:
        raise ConfigError(f"temperature={cfg.temperature!r} is not allowed; RL samples need a float > 0")
    if cfg.max_grad_norm is not None and not cfg.max_grad_norm > 0:
        raise ConfigError(f"max_grad_norm={cfg.max_grad_norm!r} is not allowed; expected a float > 0 or None")
    if cfg.group_size < 2:
        raise ConfigError(
            f"group_size={cfg.group_size} is not allowed; group advantages need at least 2 samples"
        )


def resolve_splits(cfg: Any, env: Any) -> tuple[str, str]:
    """The training and evaluation splits of ``cfg`` (``split``, ``eval_split``) for ``env``'s problem source.

    ``split=None`` means ``train`` if the source has it, else its default split (a dataset registered
    with ``reasongym.register_dataset`` has only ``test``). ``eval_split=None`` means ``test``, else
    ``validation`` (or ``dev``), else the default split, as ``reasongym eval`` chooses.

    Raises:
        ConfigError: A split the source does not have, naming the field and the available splits.
    """
    from reasongym.evaluation.runner import default_eval_split

    unwrapped = getattr(env, "unwrapped", env)
    source = getattr(unwrapped, "source", None)
    if source is None:  # a duck-typed env without a problem source: nothing to check against
        return cfg.split or "train", cfg.eval_split or "test"
    splits = tuple(source.splits())
    train = cfg.split or ("train" if "train" in splits else source.default_split)
    evaluation = cfg.eval_split or default_eval_split(unwrapped)
    known = (*splits, *getattr(source, "split_aliases", ()))
    for name, value in (("split", train), ("eval_split", evaluation)):
        if value not in known:
            nearest = difflib.get_close_matches(value, known, n=1)
            hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
            raise ConfigError(
                f"{name}={value!r} is not a split of {source.name!r}; available: {list(splits)}{hint} "
                "(None picks one the source has)"
            )
    return train, evaluation


def disable_dropout(model: torch.nn.Module) -> None:
    """Turn every dropout of ``model`` off in place: ``nn.Dropout`` modules and functional attention dropout.

    Llama and Qwen2 apply attention dropout functionally from a float ``attention_dropout`` attribute of
    each attention module, which no ``nn.Dropout`` covers, so that attribute is zeroed too.
    """
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        if isinstance(getattr(module, "attention_dropout", None), float):
            module.attention_dropout = 0.0
