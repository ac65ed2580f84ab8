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
from reasongym.generation.engines import VLLMSettings, resolve_engine

EVAL_VLLM = VLLMSettings(gpu_memory_utilization=0.9, sleep=False)
"""A vLLM engine for evaluation alone: most of the GPU, never asleep."""


def load_generator(
    model_or_path: Any,
    *,
    tokenizer: Any = None,
    device: str | None = None,
    engine: str | None = "hf",
    fall_back: bool = False,
) -> tuple[Any, Any]:
    """Turn what ``evaluate`` accepts as a model into ``(generator, tokenizer)``.

    A model (or a path) is sampled by ``engine``, `eval_engine`'s answer (``hf`` or ``vllm``); with
    ``fall_back`` (``auto`` was asked for) a model vLLM cannot load is sampled with ``hf`` instead.

    Raises:
        ConfigError: A model object without a tokenizer, a path that holds no loadable model, or
            ``engine='vllm'`` for a model it cannot load.
    """
    if _is_generator(model_or_path):
        return model_or_path, tokenizer  # already a Generator (VLLMGenerator, HFGenerator, a served model)
    from reasongym.generation.sampler import build_generator

    if isinstance(model_or_path, (str, os.PathLike)):
        model, tokenizer = load_model(model_or_path, device=device)
    else:
        if tokenizer is None:
            raise ConfigError(
                "a model object needs its tokenizer: evaluate(model, env_id, tokenizer=tokenizer, ...)"
            )
        model = model_or_path
    chosen = engine or "hf"
    return build_generator(chosen, model, tokenizer, fall_back=fall_back, settings=EVAL_VLLM), tokenizer


def eval_engine(model_or_path: Any, engine: str, device: str | None) -> str | None:
    """``hf`` or ``vllm``: the engine of an evaluation, decided once, before anything loads (records name it).

    None for a Generator given as it is (a served model samples on its server). ``auto`` looks at where the model is (a model object) or will be loaded (``device``; None: CUDA when
    available).

    Raises:
        ConfigError: An engine name not allowed, or ``engine='vllm'`` without vLLM installed.
    """
    if _is_generator(model_or_path):
        return None
    device_type = "cpu"  # only ``auto`` reads it
    if engine == "auto" and hasattr(model_or_path, "parameters"):
        device_type = next(model_or_path.parameters()).device.type
    elif engine == "auto":
        import torch

        device_type = (device or ("cuda" if torch.cuda.is_available() else "cpu")).split(":")[0]
    return resolve_engine(engine, device_type)


def _is_generator(model_or_path: Any) -> bool:
    """Whether ``model_or_path`` samples by itself (a Generator) rather than being a model to sample from."""
    return hasattr(model_or_path, "generate") and not hasattr(model_or_path, "config")


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
        ``{"model": ..., "checkpoint": ..., "weights": ...}``: a local folder as its absolute path (a folder of
        runs as its newest run's, through ``latest``) and, for a run folder or a checkpoint, the checkpoint it
        resolves to (so that a run that trained on is told apart); ``weights``, the SHA-256 of its weight
        files (from the checkpoint's manifest when it records them), so that other weights saved at the same
        path are another evaluation; a hub id as given; a served model by its name on the server (not its
        URL); another Generator or a model object by the model name it carries (``weights`` None where there
        are no files to hash).
    """
    if isinstance(model_or_path, (str, os.PathLike)):
        from reasongym.policy.checkpoints import follow_latest, resolve_weights

        path = follow_latest(Path(model_or_path).expanduser())  # a folder of runs: its newest run
        if path.is_file():  # a .gguf file
            return {"model": str(path.resolve()), "checkpoint": None, "weights": _weights_digest([path])}
        if not path.is_dir():
            return {"model": str(model_or_path), "checkpoint": None, "weights": None}

        resolved = resolve_weights(path)
        folder = path if resolved is None else resolved[0]
        return {
            "model": str(path.resolve()),
            "checkpoint": None if resolved is None else resolved[0].name,
            "weights": _recorded_digest(folder) or _weights_digest(_weight_files(folder)),
        }
    settings = getattr(model_or_path, "settings", None)  # a served model: its name on the server
    if settings is not None and getattr(settings, "model", None):
        # Not its URL: the same model restarted on another port or host resumes its evaluation.
        return {"model": f"served {settings.model}", "checkpoint": None, "weights": None}
    model = getattr(model_or_path, "model", model_or_path)  # an HFGenerator holds its model
    name = getattr(getattr(model, "config", None), "_name_or_path", None)
    return {"model": name or type(model).__name__, "checkpoint": None, "weights": None}


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_NOT_WEIGHTS = ("optimizer.pt", "scheduler.pt", "training_args.bin")


def _is_weights(name: str) -> bool:
    return name.endswith(_WEIGHT_SUFFIXES) and name not in _NOT_WEIGHTS


def _weight_files(folder: Path) -> list[Path]:
    """The files of a model folder that hold weights (``model.safetensors``, shards, adapters, a .gguf)."""
    return sorted(f for f in folder.iterdir() if f.is_file() and _is_weights(f.name))


def _weights_digest(files: list[Path]) -> str | None:
    """``sha256:<hex>`` of the named files' names and contents; None without any."""
    import hashlib

    from reasongym.policy.checkpoints import file_sha256

    if not files:
        return None
    if len(files) == 1:
        return f"sha256:{file_sha256(files[0])}"
    digest = hashlib.sha256("".join(f"{f.name}:{file_sha256(f)}\n" for f in files).encode())
    return f"sha256:{digest.hexdigest()}"


def _recorded_digest(checkpoint: Path) -> str | None:
    """The weights' hash a checkpoint's manifest records (no file is read again); None if it records none."""
    import json

    from reasongym.policy.checkpoints import MANIFEST_FILE

    try:
        hashes = json.loads((checkpoint / MANIFEST_FILE).read_text(encoding="utf-8")).get("sha256") or {}
    except (OSError, ValueError, AttributeError):
        return None
    named = sorted((name, digest) for name, digest in hashes.items() if _is_weights(name))
    if len(named) == 1:
        return f"sha256:{named[0][1]}"
    if not named:
        return None
    import hashlib

    return "sha256:" + hashlib.sha256("".join(f"{n}:{d}\n" for n, d in named).encode()).hexdigest()
