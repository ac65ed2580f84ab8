"""LoRA adapters through peft: add them to a policy, save and load them, merge them into a plain model.

`add_adapters` wraps a causal LM in peft's ``PeftModel`` in place: the model object the caller holds now
runs with the adapters, its own weights are frozen and only the adapters train. The frozen reference of
RL is that same model inside ``PeftModel.disable_adapter()``, so no second copy exists. A checkpoint of an
adapted model holds ``adapter_model.safetensors`` and ``adapter_config.json`` (peft's files), and
`load_adapted` rebuilds the merged model from a base and such a folder. peft is the optional extra
``reasongym[lora]``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from reasongym.errors import ConfigError

ADAPTER_WEIGHTS = "adapter_model.safetensors"
_WRAPPER = "_reasongym_peft_model"


def _peft() -> Any:
    try:
        import peft
    except ImportError as error:
        raise ConfigError(
            "LoRA (lora.rank > 0, or a run trained with it) needs the `peft` package; "
            "`pip install 'reasongym[lora]'` (or `pip install peft`)"
        ) from error
    return peft


def add_adapters(
    model: torch.nn.Module, *, rank: int, alpha: float, dropout: float, target_modules: Sequence[str]
) -> Any:
    """Give ``model`` LoRA adapters of rank ``rank`` on ``target_modules``, in place; returns the ``PeftModel``.

    Raises:
        ConfigError: peft is missing, or no layer of ``model`` matches ``target_modules`` (the message lists
            the names of its linear layers).
    """
    peft = _peft()
    names = list(target_modules)
    config = peft.LoraConfig(
        r=rank,
        lora_alpha=alpha,
        lora_dropout=dropout,
        bias="none",
        task_type="CAUSAL_LM",
        target_modules="all-linear" if names == ["all-linear"] else names,
    )
    try:
        adapted = peft.get_peft_model(model, config)
    except ValueError as error:
        linear = sorted(
            {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
        )
        raise ConfigError(
            f"lora.target_modules={names!r} matches no layer of this model ({str(error).splitlines()[0]}); "
            f"its linear layers are {linear}, or use ['all-linear']"
        ) from error
    object.__setattr__(model, _WRAPPER, adapted)  # `merge` finds it from the model the caller holds
    return adapted


def is_adapted(model: Any) -> bool:
    """Whether ``model`` is a peft model (carries adapters)."""
    return hasattr(model, "peft_config") and hasattr(model, "disable_adapter")


def adapters_of(model: Any) -> Any:
    """The ``PeftModel`` of ``model``: itself when it is one, the one `add_adapters` wrapped it in, else None."""
    return model if is_adapted(model) else getattr(model, _WRAPPER, None)


def adapter_state(model: Any) -> dict[str, torch.Tensor]:
    """The adapter weights of a peft model, by peft's names (what ``adapter_model.safetensors`` holds)."""
    return _peft().get_peft_model_state_dict(model, save_embedding_layers=False)


def save_adapters(model: Any, folder: str | os.PathLike[str]) -> None:
    """Write the adapter weights and config of a peft model into ``folder`` (no model card, no hub access)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    tensors = {name: tensor.detach().contiguous() for name, tensor in adapter_state(model).items()}
    save_file(tensors, str(folder / ADAPTER_WEIGHTS))
    model.peft_config["default"].save_pretrained(str(folder))


def load_adapters(model: Any, folder: str | os.PathLike[str]) -> None:
    """Load ``folder``'s adapter weights into the peft model ``model``; every adapter weight must match.

    Raises:
        ConfigError: The folder's adapters do not fit the model's (another rank or other target modules).
    """
    from safetensors.torch import load_file

    set_adapter_state(model, load_file(str(Path(folder) / ADAPTER_WEIGHTS)), str(folder))


def set_adapter_state(model: Any, state: dict[str, torch.Tensor], source: str = "the state") -> None:
    """Copy ``state`` (by `adapter_state`'s names) into the adapters of the peft model ``model``; every adapter
    weight must match.

    Raises:
        ConfigError: ``state`` does not fit the model's adapters (another rank or other target modules); the
            message names ``source``.
    """
    expected = set(adapter_state(model))
    if set(state) != expected:
        raise ConfigError(
            f"the adapters in {source!r} do not fit this model's: {len(set(state) - expected)} unknown and "
            f"{len(expected - set(state))} missing weights (trained with another lora.rank or target_modules?)"
        )
    device = next(model.parameters()).device
    _peft().set_peft_model_state_dict(model, {k: v.to(device) for k, v in state.items()})


@contextlib.contextmanager
def adapters_merged(adapted: Any) -> Iterator[None]:
    """Inside, the adapters of the ``PeftModel`` ``adapted`` are added into the frozen weights (peft's
    ``merge_adapter``) and taken out again on leaving; ``None`` (no adapters) does nothing.

    For sampling: decoding runs one token at a time, where each adapted projection's two extra small
    matmuls and peft's dispatch cost SmolLM2-135M about 13% of the sampler's time on a CPU
    (benchmarks/README.md). Merging and unmerging round the frozen weights by about one float32 ulp each
    time, so the KL reference (the model with adapters off) drifts by that much per step (TRL unmerges
    after syncing vLLM's weights the same way); gradients never flow inside.
    """
    if adapted is None:
        yield
        return
    with torch.no_grad():
        adapted.merge_adapter()
    try:
        yield
    finally:
        with torch.no_grad():
            adapted.unmerge_adapter()


def merge(model: Any) -> torch.nn.Module:
    """The plain model with the adapters added into its weights (peft's ``merge_and_unload``, in place), for
    a ``PeftModel`` or a model `add_adapters` gave adapters; any other model is returned as it is."""
    wrapper = adapters_of(model)
    if wrapper is None:
        return model
    merged = wrapper.merge_and_unload()
    object.__setattr__(merged, _WRAPPER, None)
    return merged


def load_adapted(base: torch.nn.Module, folder: str | os.PathLike[str]) -> torch.nn.Module:
    """``base`` with the adapters saved in ``folder`` merged into its weights: a plain model."""
    peft = _peft()
    adapted = peft.PeftModel.from_pretrained(base, str(folder))
    return adapted.merge_and_unload()
