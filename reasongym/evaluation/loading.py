"""Turn what ``evaluate`` accepts as a model into a sampler: a model object, a path, a run, a Generator.

Paths (hub ids, model folders, run folders, checkpoints) load through `reasongym.policy.loading.load_policy`,
which resolves runs and checkpoints with `reasongym.policy.checkpoints.resolve_weights`, the same code a resumed
training run uses. torch and transformers are imported only inside the functions.
"""

from __future__ import annotations

import os
from pathlib import Path
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
    """Load ``(model, tokenizer)`` from a hub id, a model folder, a ``.gguf`` file, a run folder or a checkpoint.

    Raises:
        ConfigError: The folder has no checkpoint or no tokenizer, or the model cannot be loaded.
    """
    import torch

    from reasongym.policy.loading import load_policy

    device = device or ("cuda" if torch.cuda.is_available() else None)
    return load_policy(str(path), device=device)


def model_identity(model_or_path: Any) -> dict[str, Any]:
    """What names the weights an evaluation runs, for the settings stored with its records.

    Returns:
        ``{"model": ..., "checkpoint": ...}``: a local folder as its absolute path (a folder of runs as its newest
        run's, through ``latest``) and, for a run folder or a checkpoint, the checkpoint it resolves to (so that a run that trained on is told apart); a hub id as
        given; a served model by its name on the server (not its URL); another Generator or a model object
        by the model name it carries.
    """
    if isinstance(model_or_path, (str, os.PathLike)):
        from reasongym.policy.checkpoints import follow_latest, resolve_weights

        path = follow_latest(Path(model_or_path).expanduser())  # a folder of runs: its newest run
        if not path.is_dir():
            return {"model": str(model_or_path), "checkpoint": None}

        resolved = resolve_weights(path)
        return {"model": str(path.resolve()), "checkpoint": None if resolved is None else resolved[0].name}
    settings = getattr(model_or_path, "settings", None)  # a served model: its name on the server
    if settings is not None and getattr(settings, "model", None):
        # Not its URL: the same model restarted on another port or host resumes its evaluation.
        return {"model": f"served {settings.model}", "checkpoint": None}
    model = getattr(model_or_path, "model", model_or_path)  # an HFGenerator holds its model
    name = getattr(getattr(model, "config", None), "_name_or_path", None)
    return {"model": name or type(model).__name__, "checkpoint": None}
