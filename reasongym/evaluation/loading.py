"""Turn what ``evaluate`` accepts as a model into a sampler: a model object, a path, a run, a Generator.

A run folder written by the trainers (``reasongym.agents.runs``) loads its latest checkpoint; its
tokenizer is found in the checkpoint, the run folder or ``<run>/tokenizer``. torch and transformers are
imported only inside the functions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError

_STEP_DIR = re.compile(r"^step-(\d+)$")


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

    A run folder loads its latest checkpoint. A checkpoint folder holds the weights and config only;
    the tokenizer is looked for in the checkpoint, then in the run folder and its ``tokenizer/`` folder.

    Raises:
        ConfigError: The folder has no checkpoint or no tokenizer, or the model cannot be loaded.
    """
    import torch

    from reasongym.models import load_policy

    device = device or ("cuda" if torch.cuda.is_available() else None)
    folder = Path(path).expanduser()
    checkpoint = find_checkpoint(folder) if folder.is_dir() else None
    if checkpoint is None:
        return load_policy(str(path), device=device)
    for candidate in (checkpoint, checkpoint.parent.parent, checkpoint.parent.parent / "tokenizer"):
        if (candidate / "tokenizer_config.json").is_file():
            break
    else:
        raise ConfigError(
            f"no tokenizer found for checkpoint {str(checkpoint)!r} (looked in the checkpoint, its run folder "
            "and <run>/tokenizer); save it there with tokenizer.save_pretrained(run_dir)"
        )
    return _load_checkpoint_model(checkpoint, candidate, device)


def _load_checkpoint_model(checkpoint: Path, tokenizer_dir: Path, device: str | None) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from reasongym.models import _prepare_for_generation

    if not (checkpoint / "config.json").is_file():
        raise ConfigError(
            f"checkpoint {str(checkpoint)!r} has no config.json; it cannot be loaded as a model"
        )
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint))
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    if device is not None:
        model = model.to(device)
    _prepare_for_generation(model, tokenizer)
    return model, tokenizer


def find_checkpoint(folder: Path) -> Path | None:
    """The checkpoint a folder names: itself (``step-N`` with a manifest), or a run folder's latest one.

    Reads the layout written by ``reasongym.agents.runs`` (``checkpoints/latest`` pointer, ``step-N``
    folders with ``checkpoint.json``) without importing the agents layer. None for a plain model folder.
    """
    if (folder / "checkpoint.json").is_file():
        return folder
    checkpoints = folder / "checkpoints"
    if not checkpoints.is_dir():
        return None
    pointer = checkpoints / "latest"
    if pointer.is_file():
        named = checkpoints / pointer.read_text(encoding="utf-8").strip()
        if (named / "checkpoint.json").is_file():
            return named
    steps = sorted(
        (int(match.group(1)), child)
        for child in checkpoints.iterdir()
        if (match := _STEP_DIR.match(child.name)) and (child / "checkpoint.json").is_file()
    )
    if not steps:
        raise ConfigError(f"run folder {str(folder)!r} has no complete checkpoint under checkpoints/")
    return steps[-1][1]
