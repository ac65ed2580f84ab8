"""`make_generator`: the sampler an engine name gives (`reasongym.generation.engines`), built on a policy."""

from __future__ import annotations

import warnings
from typing import Any

from reasongym.errors import ConfigError
from reasongym.generation.engines import VLLMSettings, resolve_engine


def make_generator(
    engine: str,
    model: Any,
    tokenizer: Any,
    *,
    batch_size: int | None = None,
    settings: VLLMSettings | None = None,
    seed: int = 0,
    tempered_logprobs: bool = False,
) -> Any:
    """The sampler of ``engine`` on ``model``: an `HFGenerator` or a `VLLMGenerator` holding its weights.

    Args:
        engine: ``hf``, ``vllm`` or ``auto`` (see the module docstring).
        model: The policy (a transformers causal LM, possibly with LoRA adapters merged or not).
        tokenizer: Its tokenizer.
        batch_size: `HFGenerator`'s rows decoded together.
        settings: The vLLM engine's settings; None: `VLLMSettings()`.
        seed: The vLLM engine's seed.
        tempered_logprobs: Build the vLLM engine to report log-probs at the sampling temperature
            (`HFGenerator` takes this per call, from `SamplingParams.tempered_logprobs`).

    Raises:
        ConfigError: ``vllm`` asked for by name and not installed, or a model it cannot load (naming it).
    """
    device = getattr(getattr(model, "device", None), "type", None) or "cpu"
    chosen = resolve_engine(engine, device)
    return build_generator(
        chosen,
        model,
        tokenizer,
        fall_back=engine == "auto",
        batch_size=batch_size,
        settings=settings,
        seed=seed,
        tempered_logprobs=tempered_logprobs,
    )


def build_generator(
    chosen: str,
    model: Any,
    tokenizer: Any,
    *,
    fall_back: bool,
    batch_size: int | None = None,
    settings: VLLMSettings | None = None,
    seed: int = 0,
    tempered_logprobs: bool = False,
) -> Any:
    """The sampler of a resolved engine (``hf`` or ``vllm``, `resolve_engine`'s answer) on ``model``.

    Args:
        chosen: The resolved engine.
        model: The policy.
        tokenizer: Its tokenizer.
        fall_back: A model vLLM cannot load is sampled with ``hf`` instead, with a warning (``auto`` was asked
            for); False: the ConfigError is raised.
        batch_size: `HFGenerator`'s rows decoded together.
        settings: The vLLM engine's settings; None: `VLLMSettings()`.
        seed: The vLLM engine's seed.
        tempered_logprobs: Build the vLLM engine to report log-probs at the sampling temperature.
    """
    if chosen == "vllm":
        from reasongym.generation.vllm_engine import VLLMGenerator

        try:
            return VLLMGenerator(
                model, tokenizer, settings or VLLMSettings(), seed=seed, tempered_logprobs=tempered_logprobs
            )
        except ConfigError as error:
            if not fall_back:
                raise
            warnings.warn(f"engine='auto': {error}; sampling with hf instead", RuntimeWarning, stacklevel=3)
    from reasongym.generation.hf import HFGenerator

    return HFGenerator(model, tokenizer, batch_size=batch_size)
