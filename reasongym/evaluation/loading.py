"""Turn what ``evaluate`` accepts as a model into a sampler: a model object, a path, a run, a Generator.

Paths (hub ids, model folders, run folders, checkpoints) load through `reasongym.models.load_policy`,
which resolves runs and checkpoints with `reasongym.checkpoints.resolve_weights`, the same code a resumed
training run uses. torch and transformers are imported only inside the functions.
"""

from __future__ import annotations

import os
from typing import Any

from reasongym.errors import ConfigError


def load_generator(
    model_or_path: Any, *, tokenizer: Any = None, device: str | None = None
) -> tuple[Any, Any]:
    """Turn what ``evaluate`` accepts as a model into ``(generator, tokenizer)``.

    Raises:
        ConfigError: A model object without a tokenizer, or a path that holds no loadable model.
    """
    if hasattr(model_or_path, "generate") and not hasattr(model_or_path, "config"):
        return model_or_path, tokenizer  # already a Generator (vLLM wrapper, HFGenerator, ...)
    from reasongym.generation import HFGenerator

    if isinstance(model_or_path, (str, os.PathLike)):
        model, tokenizer = load_model(model_or_path, device=device)
    else:
        if tokenizer is None:
            raise ConfigError(
                "a model object needs its tokenizer: evaluate(model, env_id, tokenizer=tokenizer, ...)"
            )
        model = model_or_path
    return HFGenerator(model, tokenizer), tokenizer


def load_model(path: str | os.PathLike[str], *, device: str | None = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` from a hub id, a model folder, a run folder or a checkpoint folder.

    Raises:
        ConfigError: The folder has no checkpoint or no tokenizer, or the model cannot be loaded.
    """
    import torch

    from reasongym.models import load_policy

    device = device or ("cuda" if torch.cuda.is_available() else None)
    return load_policy(str(path), device=device)
