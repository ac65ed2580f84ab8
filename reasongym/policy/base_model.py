"""The model a training run started from: recorded by where it came from when it can be rebuilt from there,
else by its weights.

RL needs the starting model twice more after it has trained: as the frozen KL reference when a run resumes,
and, with LoRA, as the base its adapters sit on when the run is evaluated or exported. `load_policy` stamps
every model it loads with its source (a ``.gguf`` file, a folder, a hub id) and a fingerprint of its
weights. When a run starts from a model whose weights still have that fingerprint, the run folder records
the source in ``base_model.json`` (a few hundred bytes instead of the whole model); any other model (the
tiny model, one changed after loading) is written to ``reference.safetensors`` as before. `reasongym.policy.loading.load_base`
rebuilds it either way and refuses a source whose weights no longer have the recorded fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch

BASE_FILE = "base_model.json"
"""Where a run records the source of the model it started from."""
REFERENCE_FILE = "reference.safetensors"
"""The weights of the model a run started from, when it has no source to be rebuilt from."""
_SOURCE_ATTRIBUTE = "_reasongym_source"


def fingerprint(model: torch.nn.Module) -> str:
    """A hash of every parameter's name, shape, float64 sum and first and last values: equal for the same
    weights, different after any optimizer step. Needs no copy of a tensor."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        flat = tensor.detach().reshape(-1)
        ends = torch.cat([flat[:4], flat[-4:]]).double().tolist() if flat.numel() else []
        digest.update(f"{name}{tuple(tensor.shape)}{float(flat.sum(dtype=torch.float64))}{ends}".encode())
    return digest.hexdigest()[:32]


def stamp_source(model: torch.nn.Module, name_or_path: str, gguf_file: str | None) -> None:
    """Remember where ``model`` was loaded from (local paths made absolute) and its weights' fingerprint."""
    path = Path(name_or_path).expanduser()
    source = str(path.resolve()) if path.exists() else name_or_path
    record = {"source": source, "gguf_file": gguf_file, "fingerprint": fingerprint(model)}
    object.__setattr__(model, _SOURCE_ATTRIBUTE, record)  # a plain attribute, not a submodule or config


def source_of(model: torch.nn.Module) -> dict[str, Any] | None:
    """``model``'s source record if its weights are still the ones it was loaded with, else None."""
    record = getattr(getattr(model, "module", model), _SOURCE_ATTRIBUTE, None)
    if record is None or record["fingerprint"] != fingerprint(model):
        return None
    return dict(record)


def record_base(model: torch.nn.Module, folder: str | os.PathLike[str]) -> str:
    """Record ``model`` as the run's starting model, unless the run has one: its source when it can be
    rebuilt, else its weights. Returns the file that holds the record."""
    from safetensors.torch import save_model

    folder = Path(folder)
    for name in (BASE_FILE, REFERENCE_FILE):
        if (folder / name).exists():
            return name
    record = source_of(model)
    if record is not None:
        (folder / BASE_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        return BASE_FILE
    save_model(getattr(model, "module", model), str(folder / REFERENCE_FILE))
    return REFERENCE_FILE
