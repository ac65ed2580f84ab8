"""Text in, text out: sampling completions from a policy. Knows nothing about environments.

`SamplingParams`, `Completion`, `GenerationBatch` and the `Generator` protocol load without torch;
`HFGenerator` (transformers backend) is imported on first use. `OpenAIGenerator` samples from a served
model over the OpenAI-compatible protocol (the ``openai`` package loads when one is made).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reasongym.generation.base import Completion, GenerationBatch, Generator, Messages, SamplingParams
from reasongym.generation.served import OpenAIGenerator, RequestCounts, ServedModelConfig

if TYPE_CHECKING:
    from reasongym.generation.hf import HFGenerator

__all__ = [
    "Completion",
    "GenerationBatch",
    "Generator",
    "HFGenerator",
    "Messages",
    "OpenAIGenerator",
    "RequestCounts",
    "SamplingParams",
    "ServedModelConfig",
]


def __getattr__(name: str) -> Any:
    # Lazy so that naming SamplingParams does not import torch and transformers.
    if name == "HFGenerator":
        from reasongym.generation.hf import HFGenerator

        return HFGenerator
    raise AttributeError(f"module 'reasongym.generation' has no attribute {name!r}")
