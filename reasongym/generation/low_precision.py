"""`LowPrecisionGenerator`: our sampler decoding from a bfloat16 copy of a float32 policy.

Why a copy: under CUDA autocast a float32 model's every matrix product casts its weight to bfloat16 again,
and a decoding step of a small model is hundreds of small products, so sampling under autocast costs more
than sampling in float32 (on one H200 a GRPO step took 5.04 s with bf16 autocast and 3.54 s without;
benchmarks/README.md, "The first GPU run"). The copy holds the weights in bfloat16 once, decodes outside
autocast, and is refreshed after each optimizer step by the trainer's weight sync (`load_weights`, as a vLLM
engine is): the optimizer and its master weights stay float32, the sampler reads 2 bytes a weight.

What it samples is the bfloat16 model's distribution, a little off the float32 policy's; a trainer rescores
the batch with the policy (one forward pass), so the loss's ratios are the trained weights', and the copy's
log-probs stay beside them for the off-policy correction, as for vLLM.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from reasongym.errors import ConfigError
from reasongym.generation.base import Completion, GenerationBatch, SamplingParams
from reasongym.generation.hf import HFGenerator
from reasongym.generation.vllm_engine import hf_weights

__all__ = ["LowPrecisionGenerator", "plain_copy"]

DTYPES = {"bf16": torch.bfloat16}
"""The copy's dtypes by name (`reasongym.agents.config.RolloutConfig.sampler_weights`)."""


class LowPrecisionGenerator:
    """`HFGenerator` on a low-precision copy of ``model`` (implements `Generator`, and ``load_weights``).

    Args:
        model: The policy (a transformers causal LM; with LoRA adapters merged, when it has them).
        tokenizer: Its tokenizer.
        dtype: The copy's parameter dtype (``torch.bfloat16``).
        **sampler: `HFGenerator`'s settings (``batch_size``, ``sync_every``, ``static_cache``).
    """

    takes_token_ids = True
    """Prompts may be token id lists, as for `HFGenerator`."""
    engine_name = "hf-bf16"
    """The engine's name in run folders and records (`reasongym.generation.engines.engine_identity`)."""

    def __init__(
        self, model: torch.nn.Module, tokenizer: Any, dtype: torch.dtype = torch.bfloat16, **sampler: Any
    ) -> None:
        """Copy ``model``'s architecture and current weights in ``dtype``."""
        self.copy = plain_copy(model, dtype)
        self.sampler = HFGenerator(self.copy, tokenizer, **sampler)
        self.engine_name = "hf-bf16" if dtype == torch.bfloat16 else f"hf-{str(dtype).removeprefix('torch.')}"
        self.load_weights(hf_weights(model))

    @property
    def dtype(self) -> torch.dtype:
        """The copy's parameter dtype."""
        return next(self.copy.parameters()).dtype

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy ``(checkpoint name, tensor)`` pairs (`hf_weights` of the policy) into the copy, cast.

        Raises:
            ConfigError: A name the copy lacks, or a copy weight no pair gave (a partial push would leave
                stale weights behind).
        """
        own = dict(self.copy.named_parameters())
        given = set()
        with torch.no_grad():
            for name, tensor in weights:
                if name not in own:
                    raise ConfigError(
                        f"weight {name!r} has no place in the sampler's copy; it holds {len(own)}"
                    )
                full = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor  # FSDP: a DTensor
                own[name].copy_(full)
                given.add(name)
        missing = sorted(set(own) - given)
        if missing:
            raise ConfigError(f"the push left {len(missing)} of the copy's weights stale, e.g. {missing[:3]}")

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        """`HFGenerator.generate` on the copy."""
        return self.sampler.generate(prompts, params)

    def generate_batch(
        self, prompts: Sequence[str] | Sequence[Sequence[int]], params: SamplingParams
    ) -> GenerationBatch:
        """`HFGenerator.generate_batch` on the copy."""
        return self.sampler.generate_batch(prompts, params)


def plain_copy(model: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """A new model of ``model``'s class and config on its device, parameters in ``dtype``, frozen, in eval mode.

    Built from the config rather than deep-copied, so that LoRA layers injected into ``model`` do not come
    along (the copy takes the merged weights by name). Buffers keep their dtype: rotary frequencies in
    bfloat16 would shift the positions of long sequences.
    """
    config = getattr(model, "config", None)
    if config is None:
        raise ConfigError(f"a {type(model).__name__} has no config to build a low-precision copy from")
    device = next(model.parameters()).device
    with torch.device(device):
        clone = type(model)(copy.deepcopy(config))
    for parameter in clone.parameters():  # tied weights are one parameter: cast once
        parameter.data = parameter.data.to(dtype)
    if getattr(model, "generation_config", None) is not None:
        clone.generation_config = copy.deepcopy(model.generation_config)  # its EOS ids stop the sampler
    return clone.requires_grad_(False).eval()
